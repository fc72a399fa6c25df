/** Role assignments: access to every assignment endpoint, and a user's resolved permissions (`/api/access-control/users/:userId/permissions`). */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  assignRole,
  buildRole,
  buildTeam,
  createOrg,
  createUser,
  DENIED,
  liveSessions,
  permissionsOf,
  signInAgain,
  type TestUser,
} from './helpers/factories.ts';

describe('role assignments (/api/access-control/users|teams/…/roles)', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  let viewer: TestUser;
  /** A Viewer given fixed:roles:writer and nothing else. */
  let rolesWriter: TestUser;
  let customUid: string;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
    viewer = await createUser(app, { role: 'Viewer' });
    rolesWriter = await createUser(app, { role: 'Viewer' });
    await assignRole(app, 'org_main', rolesWriter.id, 'fixed:roles:writer');
    const custom = buildRole({ permissions: [{ action: 'serviceaccounts:read', scope: 'serviceaccounts:*' }] });
    expect((await api(app, orgAdmin).post('/api/access-control/roles', custom)).status).to.equal(201);
    customUid = custom.uid;
  });
  after(async () => {
    await app.close();
  });

  describe('access', () => {
    let target: TestUser;
    let team: string;
    before(async () => {
      target = await createUser(app, { role: 'Viewer' });
      team = (await buildTeam(app)).id;
    });
    const endpoints = (): Array<{ method: string; path: string; body?: unknown }> => [
      { method: 'GET', path: `/api/access-control/users/${target.id}/roles` },
      { method: 'POST', path: `/api/access-control/users/${target.id}/roles`, body: { roleUid: 'fixed:teams:reader' } },
      { method: 'DELETE', path: `/api/access-control/users/${target.id}/roles/fixed:teams:reader` },
      { method: 'PUT', path: `/api/access-control/users/${target.id}/roles`, body: { roleUids: ['fixed:teams:reader'] } },
      { method: 'GET', path: `/api/access-control/teams/${team}/roles` },
      { method: 'POST', path: `/api/access-control/teams/${team}/roles`, body: { roleUid: 'fixed:teams:reader' } },
      { method: 'DELETE', path: `/api/access-control/teams/${team}/roles/fixed:teams:reader` },
      { method: 'PUT', path: `/api/access-control/teams/${team}/roles`, body: { roleUids: ['fixed:teams:reader'] } },
      { method: 'GET', path: `/api/access-control/users/${target.id}/permissions` },
    ];

    it('every endpoint is 401 without credentials', async () => {
      for (const endpoint of endpoints()) {
        const res = await app.request(endpoint.method, endpoint.path, { body: endpoint.body });
        expect(res.status, `${endpoint.method} ${endpoint.path}`).to.equal(401);
      }
    });

    it('every endpoint is 403 for a Viewer, and changes nothing', async () => {
      const [assignments, audits] = [(await app.count('user_roles')) + (await app.count('team_roles')), await app.count('audit_log', { outcome: 'success' })];
      for (const endpoint of endpoints()) {
        const res = await app.request(endpoint.method, endpoint.path, { cookie: viewer.cookie, body: endpoint.body });
        expect(res.status, `${endpoint.method} ${endpoint.path}`).to.equal(403);
        expect(res.body.message).to.match(DENIED);
      }
      expect((await app.count('user_roles')) + (await app.count('team_roles'))).to.equal(assignments);
      expect(await app.count('audit_log', { outcome: 'success' })).to.equal(audits);
      expect(await liveSessions(app, target.id)).to.equal(1);
    });
  });

  describe('GET /api/access-control/users/:userId/permissions', () => {
    it("answers the user's resolved permissions in the active org", async () => {
      const user = await createUser(app, { role: 'Viewer' });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: customUid });
      const res = await api(app, orgAdmin).get(`/api/access-control/users/${user.id}/permissions`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(await permissionsOf(app, await signInAgain(app, user)));
      expect(res.body['dashboards:read']).to.include('dashboards:*');
      expect(res.body['serviceaccounts:read']).to.deep.equal(['serviceaccounts:*']);
      expect(res.body).not.to.have.property('dashboards:write');
    });

    it('a user reads its own; a server admin member reads anyone; others are refused', async () => {
      expect((await api(app, viewer).get(`/api/access-control/users/${viewer.id}/permissions`)).status).to.equal(200);
      expect((await api(app, serverAdmin).get(`/api/access-control/users/${viewer.id}/permissions`)).status).to.equal(200);
      expect((await api(app, rolesWriter).get(`/api/access-control/users/${viewer.id}/permissions`)).status).to.equal(403);
    });

    it('answers in the org named by the header, 404 for an unknown user or one outside the org', async () => {
      const other = await createOrg(app);
      await addMember(app, other, orgAdmin.id, 'Admin');
      const there = await createUser(app, { orgId: other, role: 'Editor' });
      const res = await api(app, orgAdmin, other).get(`/api/access-control/users/${there.id}/permissions`);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.property('dashboards:write');
      for (const id of ['usr_doesnotexist0000', there.id]) {
        const missing = await api(app, orgAdmin).get(`/api/access-control/users/${id}/permissions`);
        expect(missing.status, id).to.equal(404);
        expect(missing.body.message).to.equal(`user ${id} not found in this org`);
      }
    });
  });
});
