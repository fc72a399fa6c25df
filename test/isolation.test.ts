/**
 * Org isolation, route by route: two orgs with the same kinds of resources, and a principal of
 * one (its Admin, and a service-account token of it) that can neither read nor change anything of
 * the other — neither by naming the other org in X-Svc-Org-Id nor by addressing its ids directly.
 */
import { expect } from 'chai';
import type { RouteEntry } from '../src/http/route.ts';
import type { JSONSchema } from '../src/http/guard.ts';
import { sample } from './helpers/schema-sample.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  addTeamMember,
  buildServiceAccount,
  buildTeam,
  buildToken,
  createOrg,
  createUser,
  type TestTeam,
  type TestUser,
} from './helpers/factories.ts';

interface OrgWorld {
  orgId: string;
  orgName: string;
  admin: TestUser;
  viewer: TestUser;
  team: TestTeam;
  roleUid: string;
  serviceAccountId: string;
  serviceAccountLogin: string;
  tokenId: string;
  tokenKey: string;
  legacyKeyId: string;
  folderUid: string;
  folderTitle: string;
  dashboardUid: string;
  dashboardTitle: string;
  ruleUid: string;
  ruleTitle: string;
}

/** The org's resources, each kind once, made through the API as its Admin. */
async function buildWorld(app: TestApp, orgId: string, tag: string): Promise<OrgWorld> {
  const admin = await createUser(app, { orgId, role: 'Admin', login: `admin-${tag}` });
  const viewer = await createUser(app, { orgId, role: 'Viewer', login: `viewer-${tag}` });
  const as = { cookie: admin.cookie, headers: { 'X-Svc-Org-Id': orgId } };
  const team = await buildTeam(app, { orgId, name: `team-${tag}` });
  await addTeamMember(app, team, viewer.id, 4);
  const roleUid = `custom:role-${tag}`;
  const role = await app.request('POST', '/api/access-control/roles', {
    ...as,
    body: { uid: roleUid, name: roleUid, displayName: `Role ${tag}`, permissions: [{ action: 'teams:read', scope: 'teams:*' }] },
  });
  expect(role.status, JSON.stringify(role.body)).to.equal(201);
  expect((await app.request('POST', `/api/access-control/users/${viewer.id}/roles`, { ...as, body: { roleUid } })).status).to.equal(200);
  expect((await app.request('POST', `/api/access-control/teams/${team.id}/roles`, { ...as, body: { roleUid } })).status).to.equal(200);
  const account = await buildServiceAccount(app, { orgId, name: `robot-${tag}`, role: 'Editor' });
  const token = await buildToken(app, account);
  const legacy = await app.request('POST', '/api/auth/keys', { ...as, body: { name: `key-${tag}`, role: 'Viewer' } });
  expect(legacy.status, JSON.stringify(legacy.body)).to.equal(201);
  await app.request('PUT', '/api/org/preferences', { ...as, body: { timezone: `tz-${tag}` } });
  await app.request('PUT', `/api/teams/${team.id}/preferences`, { ...as, body: { timezone: `tz-team-${tag}` } });
  const folderUid = `folder-${tag}`;
  const folderTitle = `Folder ${tag}`;
  expect((await app.request('POST', '/api/folders', { ...as, body: { uid: folderUid, title: folderTitle } })).status).to.equal(201);
  expect(
    (await app.request('POST', '/api/folders', { ...as, body: { uid: `${folderUid}-sub`, title: `${folderTitle} sub`, parentUid: folderUid } })).status,
  ).to.equal(201);
  const dashboardUid = `dashboard-${tag}`;
  const dashboardTitle = `Dashboard ${tag}`;
  expect(
    (await app.request('POST', '/api/dashboards/db', { ...as, body: { dashboard: { uid: dashboardUid, title: dashboardTitle }, folderUid } })).status,
  ).to.equal(200);
  const ruleUid = `rule-${tag}`;
  const ruleTitle = `Rule ${tag}`;
  const ruleBody = {
    uid: ruleUid,
    title: ruleTitle,
    folderUID: folderUid,
    ruleGroup: 'g',
    condition: 'A',
    data: [{ refId: 'A', datasourceUid: 'ds', model: {} }],
  };
  expect((await app.request('POST', '/api/v1/provisioning/alert-rules', { ...as, body: ruleBody })).status).to.equal(201);
  const org = await app.db('orgs').where('id', orgId).first('name');
  return {
    orgId,
    orgName: org.name,
    admin,
    viewer,
    team,
    roleUid,
    serviceAccountId: account.id,
    serviceAccountLogin: account.login,
    tokenId: token.id,
    tokenKey: token.key,
    legacyKeyId: legacy.body.id,
    folderUid,
    folderTitle,
    dashboardUid,
    dashboardTitle,
    ruleUid,
    ruleTitle,
  };
}

/** Everything of an org a request could change, as comparable rows. */
async function snapshot(app: TestApp, world: OrgWorld): Promise<string> {
  const { db } = app;
  const roleIds = db('roles').where('org_id', world.orgId).select('id');
  const teamIds = db('teams').where('org_id', world.orgId).select('id');
  const memberIds = db('org_members').where('org_id', world.orgId).select('user_id');
  const parts = await Promise.all([
    db('orgs').where('id', world.orgId).select('name', 'address', 'billing_email'),
    db('org_members').where('org_id', world.orgId).orderBy('user_id').select('user_id', 'role'),
    db('users').whereIn('id', memberIds).orderBy('id').select('id', 'login', 'email', 'name', 'is_disabled', 'is_svc_admin', 'default_org_id', 'password_hash'),
    db('teams').where('org_id', world.orgId).orderBy('id').select('id', 'name', 'email'),
    db('team_members').whereIn('team_id', teamIds).orderBy(['team_id', 'user_id']).select('team_id', 'user_id', 'permission'),
    db('team_roles').whereIn('team_id', teamIds).orderBy(['team_id', 'role_id']).select('team_id', 'role_id'),
    db('roles').where('org_id', world.orgId).orderBy('uid').select('uid', 'name', 'display_name', 'version'),
    db('role_permissions').whereIn('role_id', roleIds).orderBy(['role_id', 'action', 'scope']).select('role_id', 'action', 'scope'),
    db('user_roles').where('org_id', world.orgId).orderBy(['user_id', 'role_id']).select('user_id', 'role_id'),
    db('api_tokens').where('org_id', world.orgId).orderBy('id').select('id', 'name', 'revoked_at', 'expires_at'),
    db('sessions').whereIn('user_id', memberIds).orderBy('id').select('id', 'revoked_at'),
    db('preferences').whereIn('owner_id', [world.orgId, world.team.id]).orderBy('owner_id').select('owner_id', 'timezone', 'theme', 'home_dashboard_uid'),
    db('quotas').where({ scope_kind: 'org', scope_id: world.orgId }).orderBy('target').select('target', 'limit'),
    db('folders').where('org_id', world.orgId).orderBy('uid').select('uid', 'title', 'description', 'parent_uid', 'updated_at'),
    db('dashboards').where('org_id', world.orgId).orderBy('uid').select('uid', 'title', 'folder_uid', 'data', 'version'),
    db('alert_rules').where('org_id', world.orgId).orderBy('uid').select('uid', 'title', 'folder_uid', 'rule_group', 'data', 'version'),
    db('legacy_acl').where('org_id', world.orgId).orderBy('id').select('dashboard_uid', 'folder_uid', 'user_id', 'team_id', 'role', 'permission'),
  ]);
  return JSON.stringify(parts);
}

/** The other org's value for each path parameter and each body field that names something. */
function otherOrgValues(other: OrgWorld): { params: Record<string, (path: string) => string>; body: Record<string, unknown> } {
  return {
    params: {
      id: (path) =>
        path.startsWith('/api/orgs')
          ? other.orgId
          : path.startsWith('/api/teams')
            ? other.team.id
            : path.startsWith('/api/serviceaccounts')
              ? other.serviceAccountId
              : path.startsWith('/api/auth/keys')
                ? other.legacyKeyId
                : other.tokenId,
      orgId: () => other.orgId,
      name: () => other.orgName,
      userId: () => other.viewer.id,
      teamId: () => other.team.id,
      roleUid: () => other.roleUid,
      tokenId: () => other.tokenId,
      target: () => 'users',
      folderUid: () => other.folderUid,
      uid: (path) =>
        path.startsWith('/api/dashboards') ? other.dashboardUid : path.startsWith('/api/v1/provisioning/alert-rules') ? other.ruleUid : other.folderUid,
    },
    body: {
      userId: other.viewer.id,
      roleUid: other.roleUid,
      roleUids: [other.roleUid],
      loginOrEmail: other.viewer.login,
      role: 'Admin',
      permission: 4,
      name: `renamed-${other.orgId}`,
      limit: 0,
      parentUid: other.folderUid,
      folderUid: other.folderUid,
      folderUID: other.folderUid,
      dashboard: { uid: other.dashboardUid, title: `renamed-${other.orgId}` },
      items: [{ userId: other.viewer.id, permission: 4 }],
    },
  };
}

function request(route: RouteEntry, values: ReturnType<typeof otherOrgValues>) {
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(values.params[name]?.(route.path) ?? 'x1'));
  const schema = route.schemas.body as { properties?: Record<string, JSONSchema> } | undefined;
  const body = route.schemas.body ? (sample(route.schemas.body) as Record<string, unknown>) : undefined;
  if (body && schema?.properties) {
    for (const [key, value] of Object.entries(values.body)) if (key in schema.properties) body[key] = value;
  }
  return { method: route.method.toUpperCase(), path, body };
}

/** Routes that act on org resources (the self and server-admin families are tested elsewhere). */
const isOrgRoute = (route: RouteEntry) =>
  route.access === 'authenticated' && (!/^\/api\/(user|admin)\b/.test(route.path) || /^\/api\/user\/(using|permissions)/.test(route.path));

describe('org isolation', function () {
  this.timeout(120_000);
  let app: TestApp;
  let a: OrgWorld;
  let b: OrgWorld;

  before(async () => {
    app = await startTestApp();
    a = await buildWorld(app, 'org_main', 'a');
    b = await buildWorld(app, await createOrg(app, { name: 'Other Org' }), 'b');
  });
  after(async () => {
    await app.close();
  });

  const principals = () => [
    { label: "org A's Admin", auth: { cookie: a.admin.cookie } },
    { label: "org A's service-account token", auth: { token: a.tokenKey } },
  ];

  it('the two orgs hold the same kinds of resources', async () => {
    expect(await snapshot(app, a)).to.not.equal('[]');
    for (const world of [a, b]) {
      expect(await app.count('teams', { org_id: world.orgId })).to.equal(1);
      expect(await app.count('api_tokens', { org_id: world.orgId })).to.equal(2);
      expect(await app.count('folders', { org_id: world.orgId })).to.equal(2);
      expect(await app.count('dashboards', { org_id: world.orgId })).to.equal(1);
      expect(await app.count('alert_rules', { org_id: world.orgId })).to.equal(1);
    }
  });

  it('naming the other org in X-Svc-Org-Id gets nothing and changes nothing, route by route', async () => {
    const before = await snapshot(app, b);
    const values = otherOrgValues(b);
    const routes = app.built.routes.filter(isOrgRoute);
    expect(routes.length).to.be.greaterThan(40);
    for (const principal of principals()) {
      for (const route of routes) {
        const { method, path, body } = request(route, values);
        const res = await app.request(method, path, { ...principal.auth, body, headers: { 'X-Svc-Org-Id': b.orgId } });
        expect(res.status, `${principal.label}: ${method} ${path} with X-Svc-Org-Id ${b.orgId} -> ${JSON.stringify(res.body)}`).to.be.oneOf([
          400, 401, 403, 404, 409,
        ]);
      }
    }
    expect(await snapshot(app, b)).to.equal(before);
  });

  it("addressing the other org's ids directly gets nothing and changes nothing, route by route", async () => {
    const before = await snapshot(app, b);
    const values = otherOrgValues(b);
    const routes = app.built.routes.filter((route) => isOrgRoute(route) && route.path.includes('/:'));
    for (const principal of principals()) {
      for (const route of routes) {
        const { method, path, body } = request(route, values);
        const res = await app.request(method, path, { ...principal.auth, body });
        expect(res.status, `${principal.label}: ${method} ${path} -> ${JSON.stringify(res.body)}`).to.be.oneOf([400, 401, 403, 404, 409]);
      }
    }
    expect(await snapshot(app, b)).to.equal(before);
  });

  it("lists in one's own org show nothing of the other org", async () => {
    const secrets = [
      b.orgId,
      b.team.name,
      b.roleUid,
      b.serviceAccountLogin,
      b.viewer.login,
      b.admin.login,
      b.legacyKeyId,
      b.folderUid,
      b.folderTitle,
      b.dashboardUid,
      b.dashboardTitle,
      b.ruleUid,
      b.ruleTitle,
    ];
    const lists = app.built.routes.filter((route) => isOrgRoute(route) && route.method === 'get' && !route.path.includes('/:'));
    expect(lists.length).to.be.greaterThan(6);
    for (const principal of principals()) {
      for (const route of lists) {
        // managed roles are hidden by default: ask for them too
        const url = route.path === '/api/access-control/roles' ? `${route.path}?includeHidden=true` : route.path;
        const res = await app.request('GET', url, principal.auth);
        const text = JSON.stringify(res.body);
        for (const secret of secrets) expect(text, `${principal.label}: GET ${route.path} shows ${secret}`).not.to.include(secret);
      }
    }
  });

  it("the other org's admin can still do it all: the test's requests are real", async () => {
    const as = { cookie: b.admin.cookie, headers: { 'X-Svc-Org-Id': b.orgId } };
    expect((await app.request('GET', `/api/teams/${b.team.id}`, as)).status).to.equal(200);
    expect((await app.request('GET', `/api/folders/${b.folderUid}`, as)).status).to.equal(200);
    expect((await app.request('GET', `/api/dashboards/uid/${b.dashboardUid}`, as)).status).to.equal(200);
    expect((await app.request('GET', `/api/v1/provisioning/alert-rules/${b.ruleUid}`, as)).status).to.equal(200);
    expect((await app.request('GET', '/api/search', as)).body.hits.map((hit: { uid: string }) => hit.uid)).to.include(b.dashboardUid);
    expect((await app.request('GET', `/api/serviceaccounts/${b.serviceAccountId}`, as)).status).to.equal(200);
    expect((await app.request('GET', `/api/access-control/roles/${encodeURIComponent(b.roleUid)}`, as)).status).to.equal(200);
    expect((await app.request('GET', '/api/org/users', as)).body.orgUsers.map((u: { login: string }) => u.login)).to.include(b.viewer.login);
    const invite = await app.request('POST', '/api/org/users', { ...as, body: { loginOrEmail: a.viewer.login, role: 'Viewer' } });
    expect(invite.status).to.equal(200);
    await app.request('DELETE', `/api/org/users/${a.viewer.id}`, as);
  });

  it('a user who belongs to both orgs sees each only through its header', async () => {
    const both = await createUser(app, { login: 'in-both', role: 'Viewer' });
    await addMember(app, b.orgId, both.id, 'Admin');
    expect((await app.request('GET', '/api/user/permissions', { cookie: both.cookie })).body).not.to.have.property('org.users:add');
    expect((await app.request('GET', '/api/user/permissions', { cookie: both.cookie, headers: { 'X-Svc-Org-Id': b.orgId } })).body).to.have.property(
      'org.users:add',
    );
    expect((await app.request('GET', `/api/teams/${b.team.id}`, { cookie: both.cookie })).status).to.be.oneOf([403, 404]);
  });
});
