import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  addTeamMember,
  api,
  assignRole,
  auditEntries,
  buildRole,
  buildTeam,
  createOrg,
  createUser,
  DELEGATION_DENIED,
  DENIED,
  liveSessions,
  type RoleBody,
  signInAgain,
  type TestUser,
  grantManagedPermissions,
} from './helpers/factories.ts';

/** Any refusal: a policy deny, or the delegation rule's own message. */

const ROLE_FIELDS = ['uid', 'name', 'displayName', 'description', 'groupName', 'global', 'hidden', 'version', 'permissions'];

describe('roles (/api/access-control/roles)', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  let viewer: TestUser;
  /** A Viewer given fixed:roles:writer and nothing else about dashboards. */
  let rolesWriter: TestUser;
  let rolesReader: TestUser;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    rolesWriter = await createUser(app, { role: 'Viewer' });
    await assignRole(app, 'org_main', rolesWriter.id, 'fixed:roles:writer');
    rolesReader = await createUser(app, { role: 'Viewer' });
    await assignRole(app, 'org_main', rolesReader.id, 'fixed:roles:reader');
  });
  after(async () => {
    await app.close();
  });

  const roleRow = (uid: string, orgId: string | null = 'org_main') =>
    (orgId ? app.db('roles').where({ uid, org_id: orgId }) : app.db('roles').where('uid', uid).whereNull('org_id')).first();
  const permissionRows = async (roleId: number) =>
    (await app.db('role_permissions').where('role_id', roleId).orderBy(['action', 'scope']).select('action', 'scope')).map(
      (p: { action: string; scope: string }) => `${p.action} ${p.scope}`,
    );

  async function createRole(overrides: Partial<RoleBody> = {}, as: TestUser = orgAdmin) {
    const body = buildRole(overrides);
    const res = await api(app, as).post('/api/access-control/roles', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as RoleBody & { version: number };
  }

  /** A managed role as resource grants make one: of a real user or team, hidden. */
  async function managedRoleOf(holder: 'user' | 'team'): Promise<string> {
    const permissions = [{ action: 'dashboards:read', scope: 'dashboards:uid:d1' }];
    if (holder === 'team') return grantManagedPermissions(app, 'org_main', { kind: 'team', teamId: (await buildTeam(app)).id }, permissions);
    return grantManagedPermissions(app, 'org_main', { kind: 'user', userId: (await createUser(app)).id }, permissions);
  }

  describe('access', () => {
    const endpoints: Array<{ method: string; path: string; body?: () => unknown }> = [
      { method: 'GET', path: '/api/access-control/roles' },
      { method: 'GET', path: '/api/access-control/roles/fixed:dashboards:reader' },
      { method: 'POST', path: '/api/access-control/roles', body: () => buildRole() },
      { method: 'PUT', path: '/api/access-control/roles/custom:access-target', body: () => ({ version: 1, displayName: 'Changed' }) },
      { method: 'DELETE', path: '/api/access-control/roles/custom:access-target' },
    ];
    before(async () => {
      await createRole({ uid: 'custom:access-target', name: 'custom:access-target' });
    });

    for (const endpoint of endpoints) {
      const name = `${endpoint.method} ${endpoint.path}`;
      it(`${name} is 401 without credentials`, async () => {
        const res = await app.request(endpoint.method, endpoint.path, { body: endpoint.body?.() });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.be.a('string');
      });

      it(`${name} is 403 for a Viewer, and changes nothing`, async () => {
        const [roles, audits] = [await app.count('roles'), await app.count('audit_log', { outcome: 'success' })];
        const res = await app.request(endpoint.method, endpoint.path, { cookie: viewer.cookie, body: endpoint.body?.() });
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
        expect(await app.count('roles')).to.equal(roles);
        expect(await app.count('audit_log', { outcome: 'success' })).to.equal(audits);
        expect((await roleRow('custom:access-target')).version).to.equal(1);
      });
    }

    it('a holder of fixed:roles:reader reads but does not write', async () => {
      expect((await api(app, rolesReader).get('/api/access-control/roles')).status).to.equal(200);
      expect((await api(app, rolesReader).get('/api/access-control/roles/custom:access-target')).status).to.equal(200);
      expect((await api(app, rolesReader).post('/api/access-control/roles', buildRole())).status).to.equal(403);
      expect((await api(app, rolesReader).delete('/api/access-control/roles/custom:access-target')).status).to.equal(403);
    });
  });

  describe('GET /api/access-control/roles', () => {
    it('lists the basic, fixed and custom roles of the org plus the global ones, each uid once, with permissions', async () => {
      const custom = await createRole();
      const global = await createRole({ global: true }, serverAdmin);
      const res = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000');
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('totalCount', 'roles', 'page', 'perPage');
      const roles: Array<Record<string, any>> = res.body.roles;
      expect(res.body.totalCount).to.equal(roles.length);
      for (const role of roles) expect(role, role.uid).to.have.all.keys(...ROLE_FIELDS);
      const uids = roles.map((r) => r.uid);
      expect(uids).to.deep.equal([...new Set(uids)]);
      expect(uids).to.deep.equal([...uids].sort());
      expect(uids.filter((u) => u.startsWith('fixed:'))).to.have.length(56);
      expect(uids).to.include.members(['basic:viewer', 'basic:editor', 'basic:admin', 'basic:server_admin', custom.uid, global.uid]);
      // the org's own basic:server_admin stands for the global one of the same uid
      expect(roles.find((r) => r.uid === 'basic:server_admin')).to.include({ global: false });
      expect(roles.find((r) => r.uid === global.uid)).to.include({ global: true, hidden: false, version: 1 });
      expect(roles.find((r) => r.uid === 'fixed:teams:reader')).to.deep.include({
        permissions: [{ action: 'teams:read', scope: 'teams:*' }],
        hidden: false,
        global: false,
      });
    });

    it('shows managed roles only with includeHidden=true', async () => {
      const managed = await managedRoleOf('user');
      const plain = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000');
      expect(plain.body.roles.map((r: { uid: string }) => r.uid)).not.to.include(managed);
      const off = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000&includeHidden=false');
      expect(off.body.totalCount).to.equal(plain.body.totalCount);
      const hidden = await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000&includeHidden=true');
      expect(hidden.status).to.equal(200);
      expect(hidden.body.totalCount).to.be.greaterThan(plain.body.totalCount);
      expect(hidden.body.roles.find((r: { uid: string }) => r.uid === managed)).to.include({ hidden: true, global: false });
    });

    it('does not show the roles of another org', async () => {
      const other = await createOrg(app);
      await addMember(app, other, orgAdmin.id, 'Admin');
      const elsewhere = await createRole({}, orgAdmin);
      const res = await api(app, orgAdmin, other).get('/api/access-control/roles?perpage=1000');
      expect(res.status).to.equal(200);
      const uids = res.body.roles.map((r: { uid: string }) => r.uid);
      expect(uids).not.to.include(elsewhere.uid);
      expect(uids).to.include('fixed:dashboards:writer');
    });

    it('pages with perpage and page', async () => {
      const all = (await api(app, orgAdmin).get('/api/access-control/roles?perpage=1000')).body.roles.map((r: { uid: string }) => r.uid);
      const res = await api(app, orgAdmin).get('/api/access-control/roles?perpage=5&page=2');
      expect(res.body).to.include({ totalCount: all.length, page: 2, perPage: 5 });
      expect(res.body.roles.map((r: { uid: string }) => r.uid)).to.deep.equal(all.slice(5, 10));
    });

    it('rejects bad query parameters with 400', async () => {
      for (const query of ['includeHidden=maybe', 'perpage=0', 'page=x', 'sort=uid']) {
        const res = await api(app, orgAdmin).get(`/api/access-control/roles?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
    });
  });

  describe('GET /api/access-control/roles/:roleUid', () => {
    it('returns a role with its permissions', async () => {
      const res = await api(app, orgAdmin).get('/api/access-control/roles/fixed:dashboards:writer');
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...ROLE_FIELDS);
      expect(res.body).to.include({ uid: 'fixed:dashboards:writer', name: 'fixed:dashboards:writer', global: false, hidden: false });
      expect(res.body.permissions.map((p: { action: string }) => p.action)).to.include.members([
        'dashboards:read',
        'dashboards:write',
        'dashboards:create',
        'dashboards:delete',
      ]);
    });

    it('finds a global role from any org, and 404s on an unknown role or one of another org', async () => {
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).get(`/api/access-control/roles/${global.uid}`)).body).to.include({ uid: global.uid, global: true });
      expect((await api(app, orgAdmin).get('/api/access-control/roles/custom:nope')).status).to.equal(404);
      const other = await createOrg(app);
      const otherAdmin = await createUser(app, { orgId: other, role: 'Admin' });
      const foreign = await createRole({}, otherAdmin);
      const res = await api(app, orgAdmin).get(`/api/access-control/roles/${foreign.uid}`);
      expect(res.status).to.equal(404);
      expect(res.body.message).to.equal(`role ${foreign.uid} not found`);
    });
  });

  describe('POST /api/access-control/roles', () => {
    it('creates a custom role in the org: 201, version 1, stored with its permissions, audited', async () => {
      const body = buildRole({
        permissions: [
          { action: 'teams:read', scope: 'teams:*' },
          { action: 'dashboards:write', scope: 'folders:uid:f1' },
          { action: 'dashboards:write', scope: 'folders:uid:f1' },
        ],
      });
      const res = await api(app, orgAdmin).post('/api/access-control/roles', body);
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.equal({
        uid: body.uid,
        name: body.name,
        displayName: body.displayName,
        description: 'made by a test',
        groupName: 'Tests',
        global: false,
        hidden: false,
        version: 1,
        permissions: [
          { action: 'dashboards:write', scope: 'folders:uid:f1' },
          { action: 'teams:read', scope: 'teams:*' },
        ],
      });
      const row = await roleRow(body.uid);
      expect(row).to.include({ org_id: 'org_main', name: body.name, version: 1 });
      expect(await permissionRows(row.id)).to.deep.equal(['dashboards:write folders:uid:f1', 'teams:read teams:*']);
      const [audit] = await auditEntries(app, { action: 'role.created', target_id: body.uid });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_type: 'role', target_name: body.name, outcome: 'success' });
      expect(audit!.metadata).to.deep.equal({ global: false, permissions: 3 });
    });

    it('defaults description and group to empty and accepts a role without permissions', async () => {
      const res = await api(app, orgAdmin).post('/api/access-control/roles', { uid: 'custom:bare', name: 'custom:bare', displayName: 'Bare', permissions: [] });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ description: '', groupName: '' });
      expect(res.body.permissions).to.deep.equal([]);
    });

    it('refuses the reserved prefixes basic:, fixed: and managed: with 400 saying so', async () => {
      for (const prefix of ['basic:', 'fixed:', 'managed:']) {
        for (const field of ['uid', 'name'] as const) {
          const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ [field]: `${prefix}mine` }));
          expect(res.status, `${field} ${prefix}`).to.equal(400);
          expect(res.body.message).to.include(`reserved prefix ${prefix}`);
        }
      }
      expect(await app.count('roles', { uid: 'basic:mine' })).to.equal(0);
    });

    it('refuses a uid or name that does not start with custom: with 400', async () => {
      for (const overrides of [
        { uid: 'mine' },
        { name: 'reports' },
        { uid: 'custom:' },
        { uid: 'Custom:x' },
        { uid: 'custom:with space' },
        { uid: 'custom:a/b' },
      ]) {
        const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole(overrides));
        expect(res.status, JSON.stringify(overrides)).to.equal(400);
        expect(res.body.message).to.match(/custom:/);
      }
    });

    it('validates actions and scopes', async () => {
      const bad = [
        { action: 'dashboards', scope: '*' },
        { action: 'Dashboards:read', scope: '*' },
        { action: ':read', scope: '*' },
        { action: 'dashboards:read:more', scope: '*' },
        { action: 'dashboards:read', scope: 'dashboards' },
        { action: 'dashboards:read', scope: 'dashboards:uid:' },
        { action: 'dashboards:read', scope: '**' },
        { action: 'dashboards:read', scope: 'dashboards:uid:a b' },
      ];
      for (const permission of bad) {
        const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ permissions: [permission] }));
        expect(res.status, JSON.stringify(permission)).to.equal(400);
        expect(res.body.message).to.match(/^permissions\[0\]\.(action|scope) /);
      }
      const good = [
        { action: '*', scope: '*' },
        { action: 'dashboards:*', scope: 'dashboards:*' },
        { action: 'alert.rules:create', scope: 'folders:uid:f1' },
        { action: 'roles:read', scope: 'roles:uid:custom:x' },
        { action: 'teams:read', scope: 'teams:id:*' },
      ];
      const res = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ permissions: good }));
      expect(res.status).to.equal(201);
      expect(res.body.permissions).to.have.length(good.length);
    });

    it('rejects missing fields, wrong types and unknown fields with 400', async () => {
      const { uid: _uid, ...noUid } = buildRole();
      const { permissions: _p, ...noPermissions } = buildRole();
      const bodies = [
        noUid,
        noPermissions,
        { ...buildRole(), displayName: 7 },
        { ...buildRole(), permissions: 'all' },
        { ...buildRole(), permissions: [{ scope: 'teams:*' }] },
        { ...buildRole(), global: 'yes' },
        { ...buildRole(), version: 3 },
      ];
      for (const body of bodies) {
        const res = await api(app, orgAdmin).post('/api/access-control/roles', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await app.request('POST', '/api/access-control/roles', { cookie: orgAdmin.cookie })).status).to.equal(400);
    });

    it('answers 409 on a uid the org already has, or a global role has', async () => {
      const first = await createRole();
      const dup = await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ uid: first.uid }));
      expect(dup.status).to.equal(409);
      expect(dup.body.message).to.equal(`a role with uid ${first.uid} already exists`);
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).post('/api/access-control/roles', buildRole({ uid: global.uid }))).status).to.equal(409);
      expect(await app.count('roles', { uid: first.uid })).to.equal(1);
    });

    it('creates a global role only for a server admin', async () => {
      const body = buildRole({ global: true });
      const refused = await api(app, orgAdmin).post('/api/access-control/roles', body);
      expect(refused.status).to.equal(403);
      expect(await app.count('roles', { uid: body.uid })).to.equal(0);
      const res = await api(app, serverAdmin).post('/api/access-control/roles', body);
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ global: true, version: 1 });
      expect((await roleRow(body.uid, null)).org_id).to.equal(null);
      const [audit] = await auditEntries(app, { action: 'role.created', target_id: body.uid });
      expect(audit).to.include({ org_id: null, actor_id: serverAdmin.id });
      expect(audit!.metadata).to.deep.include({ global: true });
    });

    describe('delegation', () => {
      it('an org Admin holds *:* and may create a role with any permission', async () => {
        const res = await api(app, orgAdmin).post(
          '/api/access-control/roles',
          buildRole({
            permissions: [
              { action: 'dashboards:write', scope: 'dashboards:*' },
              { action: 'users:read', scope: 'users:*' },
            ],
          }),
        );
        expect(res.status).to.equal(201);
      });

      it('a holder of fixed:roles:writer may create a role granting what it holds', async () => {
        const res = await api(app, rolesWriter).post(
          '/api/access-control/roles',
          buildRole({
            permissions: [
              { action: 'roles:read', scope: 'roles:*' },
              { action: 'dashboards:read', scope: 'dashboards:uid:d1' },
            ],
          }),
        );
        expect(res.status).to.equal(201);
      });

      it('a holder of fixed:roles:writer cannot create a role with dashboards:write: 403', async () => {
        const body = buildRole({ permissions: [{ action: 'dashboards:write', scope: 'dashboards:*' }] });
        const res = await api(app, rolesWriter).post('/api/access-control/roles', body);
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DELEGATION_DENIED);
        expect(await app.count('roles', { uid: body.uid })).to.equal(0);
      });
    });
  });

  describe('PUT /api/access-control/roles/:roleUid', () => {
    it('updates the fields, bumps the version, audits', async () => {
      const role = await createRole();
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        displayName: 'Renamed',
        description: 'new words',
        permissions: [{ action: 'teams:read', scope: 'teams:*' }],
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ uid: role.uid, name: role.name, displayName: 'Renamed', description: 'new words', groupName: 'Tests', version: 2 });
      expect(res.body.permissions).to.deep.equal([{ action: 'teams:read', scope: 'teams:*' }]);
      const row = await roleRow(role.uid);
      expect(row).to.include({ version: 2, display_name: 'Renamed' });
      expect(await permissionRows(row.id)).to.deep.equal(['teams:read teams:*']);
      const [audit] = await auditEntries(app, { action: 'role.updated', target_id: role.uid });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_type: 'role' });
      expect(audit!.metadata).to.deep.equal({ global: false, version: 2, fields: ['displayName', 'description', 'permissions'] });
    });

    it('keeps the permissions when none are given', async () => {
      const role = await createRole();
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, groupName: 'Other' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ groupName: 'Other', version: 2 });
      expect(res.body.permissions).to.deep.equal(role.permissions);
    });

    it('answers 409 when the version is not the stored one, changing nothing', async () => {
      const role = await createRole();
      expect((await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, displayName: 'First' })).status).to.equal(200);
      const stale = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, displayName: 'Second' });
      expect(stale.status).to.equal(409);
      expect(stale.body.message).to.match(/version 1/);
      expect(await roleRow(role.uid)).to.include({ version: 2, display_name: 'First' });
      expect((await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 9, displayName: 'Ahead' })).status).to.equal(409);
      expect(await auditEntries(app, { action: 'role.updated', target_id: role.uid })).to.have.length(1);
    });

    it('of two concurrent updates at the same version exactly one wins', async () => {
      const role = await createRole();
      const [a, b] = await Promise.all(
        ['A', 'B'].map((tag) =>
          api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, {
            version: 1,
            displayName: tag,
            permissions: [{ action: 'teams:read', scope: `teams:id:${tag}` }],
          }),
        ),
      );
      expect([a!.status, b!.status].sort()).to.deep.equal([200, 409]);
      const winner = a!.status === 200 ? 'A' : 'B';
      const row = await roleRow(role.uid);
      expect(row).to.include({ version: 2, display_name: winner });
      expect(await permissionRows(row.id)).to.deep.equal([`teams:read teams:id:${winner}`]);
    });

    it('refuses to change basic, fixed and managed roles with 400', async () => {
      const managed = await managedRoleOf('user');
      for (const uid of ['basic:viewer', 'fixed:dashboards:reader', managed]) {
        const before = await roleRow(uid);
        const res = await api(app, serverAdmin).put(`/api/access-control/roles/${uid}`, { version: before.version, displayName: 'Hacked' });
        expect(res.status, uid).to.equal(400);
        expect(res.body.message).to.match(/cannot be changed: only custom roles can/);
        expect(await roleRow(uid)).to.deep.equal(before);
      }
    });

    it('rejects bad input: unknown role 404, missing version, a new uid, a reserved name, bad permissions 400', async () => {
      expect((await api(app, orgAdmin).put('/api/access-control/roles/custom:nope', { version: 1 })).status).to.equal(404);
      const role = await createRole();
      const bodies = [
        { displayName: 'No version' },
        { version: 0 },
        { version: '1' },
        { version: 1, uid: 'custom:other' },
        { version: 1, name: 'fixed:mine' },
        { version: 1, name: 'plain' },
        { version: 1, global: true },
        { version: 1, permissions: [{ action: 'nope', scope: '*' }] },
        { version: 1, hidden: true },
      ];
      for (const body of bodies) {
        const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await roleRow(role.uid)).version).to.equal(1);
    });

    it('a global role is changed by server admins only', async () => {
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).put(`/api/access-control/roles/${global.uid}`, { version: 1, displayName: 'Org admin was here' })).status).to.equal(403);
      const res = await api(app, serverAdmin).put(`/api/access-control/roles/${global.uid}`, { version: 1, displayName: 'Server admin was here' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ global: true, version: 2 });
    });

    it('needs delegation on the new permissions', async () => {
      const role = await createRole({ permissions: [{ action: 'roles:read', scope: 'roles:*' }] }, rolesWriter);
      const res = await api(app, rolesWriter).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        permissions: [{ action: 'dashboards:write', scope: 'dashboards:*' }],
      });
      expect(res.status).to.equal(403);
      expect((await roleRow(role.uid)).version).to.equal(1);
      const allowed = await api(app, rolesWriter).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        permissions: [{ action: 'roles:write', scope: 'roles:*' }],
      });
      expect(allowed.status).to.equal(200);
    });

    it('a change of permissions reaches the next request of its holders, on the sessions they have: nobody is signed out', async () => {
      const role = await createRole({ permissions: [{ action: 'teams:read', scope: 'teams:*' }] });
      const direct = await createUser(app, { role: 'Viewer' });
      const throughTeam = await createUser(app, { role: 'Viewer' });
      const bystander = await createUser(app, { role: 'Viewer' });
      const team = (await buildTeam(app)).id;
      await addTeamMember(app, team, throughTeam.id);
      expect((await api(app, orgAdmin).post(`/api/access-control/users/${direct.id}/roles`, { roleUid: role.uid })).status).to.equal(200);
      expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: role.uid })).status).to.equal(200);
      const holders = [await signInAgain(app, direct), await signInAgain(app, throughTeam)];
      for (const holder of holders) expect((await api(app, holder).get('/api/user/permissions')).body).not.to.have.property('serviceaccounts:read');

      const sessions = [await liveSessions(app, direct.id), await liveSessions(app, throughTeam.id)];
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        permissions: [{ action: 'serviceaccounts:read', scope: 'serviceaccounts:*' }],
      });
      expect(res.status).to.equal(200);
      for (const holder of holders) {
        const next = await api(app, holder).get('/api/user/permissions');
        expect(next.status).to.equal(200);
        expect(next.body).to.have.property('serviceaccounts:read').that.deep.equals(['serviceaccounts:*']);
        expect(next.body).not.to.have.property('teams:create');
        expect((await api(app, holder).get('/api/serviceaccounts/search')).status).to.equal(200);
      }
      expect([await liveSessions(app, direct.id), await liveSessions(app, throughTeam.id)]).to.deep.equal(sessions);
      expect(await liveSessions(app, bystander.id)).to.equal(1);
      expect(await auditEntries(app, { action: 'session.revoked', target_id: direct.id })).to.deep.equal([]);
      const [audit] = await auditEntries(app, { action: 'role.updated', target_id: role.uid });
      expect(audit!.metadata).to.deep.include({ fields: ['permissions'] });
    });

    it('a change that leaves the permissions as they are revokes nobody', async () => {
      const role = await createRole();
      const holder = await createUser(app, { role: 'Viewer' });
      await api(app, orgAdmin).post(`/api/access-control/users/${holder.id}/roles`, { roleUid: role.uid });
      const sessions = await liveSessions(app, holder.id);
      const res = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, { version: 1, displayName: 'Cosmetic', permissions: role.permissions });
      expect(res.status).to.equal(200);
      expect(await liveSessions(app, holder.id)).to.equal(sessions);
    });
  });

  describe('DELETE /api/access-control/roles/:roleUid', () => {
    it('deletes a custom role with its permissions and assignments, audits; its holders lose it at their next request, signed in still', async () => {
      const role = await createRole({ permissions: [{ action: 'serviceaccounts:read', scope: 'serviceaccounts:*' }] });
      const holder = await createUser(app, { role: 'Viewer' });
      expect((await api(app, orgAdmin).post(`/api/access-control/users/${holder.id}/roles`, { roleUid: role.uid })).status).to.equal(200);
      const signedIn = await signInAgain(app, holder);
      expect((await api(app, signedIn).get('/api/user/permissions')).body).to.have.property('serviceaccounts:read');
      const { id } = await roleRow(role.uid);

      const res = await api(app, orgAdmin).delete(`/api/access-control/roles/${role.uid}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'role deleted' });
      expect(await app.count('roles', { uid: role.uid })).to.equal(0);
      expect(await app.count('role_permissions', { role_id: id })).to.equal(0);
      expect(await app.count('user_roles', { role_id: id })).to.equal(0);
      expect(await liveSessions(app, holder.id)).to.equal(2);
      const next = await api(app, signedIn).get('/api/user/permissions');
      expect(next.status).to.equal(200);
      expect(next.body).not.to.have.property('serviceaccounts:read');
      const [audit] = await auditEntries(app, { action: 'role.deleted', target_id: role.uid });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_name: role.name });
      expect(audit!.metadata).to.deep.equal({ global: false, assignments: 1 });
      expect((await api(app, orgAdmin).get(`/api/access-control/roles/${role.uid}`)).status).to.equal(404);
    });

    it('refuses to delete basic, fixed and managed roles with 400', async () => {
      const managed = await managedRoleOf('team');
      for (const uid of ['basic:admin', 'fixed:roles:writer', managed]) {
        const res = await api(app, serverAdmin).delete(`/api/access-control/roles/${uid}`);
        expect(res.status, uid).to.equal(400);
        expect(res.body.message).to.match(/cannot be deleted: only custom roles can/);
        expect(await app.count('roles', { uid, org_id: 'org_main' })).to.equal(1);
      }
    });

    it('answers 404 on an unknown role', async () => {
      const res = await api(app, orgAdmin).delete('/api/access-control/roles/custom:nope');
      expect(res.status).to.equal(404);
      expect(res.body.message).to.equal('role custom:nope not found');
    });

    it('a global role is deleted by server admins only', async () => {
      const global = await createRole({ global: true }, serverAdmin);
      expect((await api(app, orgAdmin).delete(`/api/access-control/roles/${global.uid}`)).status).to.equal(403);
      expect((await api(app, serverAdmin).delete(`/api/access-control/roles/${global.uid}`)).status).to.equal(200);
      expect(await app.count('roles', { uid: global.uid })).to.equal(0);
    });

    it('needs delegation on the permissions the role grants', async () => {
      const role = await createRole({ permissions: [{ action: 'dashboards:write', scope: 'dashboards:*' }] });
      const res = await api(app, rolesWriter).delete(`/api/access-control/roles/${role.uid}`);
      expect(res.status).to.equal(403);
      expect(await app.count('roles', { uid: role.uid })).to.equal(1);
    });
  });
});
