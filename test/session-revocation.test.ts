import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addTeamMember,
  api,
  auditEntries,
  buildRole,
  buildTeam,
  createUser,
  DEFAULT_PASSWORD,
  liveSessions,
  sessionCookie,
  type TestUser,
} from './helpers/factories.ts';

/**
 * The spec's session rule, both halves: a change of the user's own standing (org role, removal
 * from the org, server-admin flag, disable, password) ends their sessions; a change to roles
 * (a custom role's permissions, role assignments) logs nobody out and holds from the next request.
 */
describe("session revocation: on the user's own role change, not on role edits", () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  const permissions = async (user: TestUser) => {
    const res = await api(app, user).get('/api/user/permissions');
    expect(res.status, 'the session still works').to.equal(200);
    return res.body as Record<string, string[]>;
  };

  describe('role edits and assignments: the holder stays signed in and the next request sees the change', () => {
    it("editing a custom role's permissions, for a direct holder and a holder through a team", async () => {
      const role = buildRole({ permissions: [{ action: 'teams:read', scope: 'teams:*' }] });
      expect((await api(app, orgAdmin).post('/api/access-control/roles', role)).status).to.equal(201);
      const [direct, throughTeam] = [await createUser(app), await createUser(app)];
      const team = (await buildTeam(app)).id;
      await addTeamMember(app, team, throughTeam.id);
      expect((await api(app, orgAdmin).post(`/api/access-control/users/${direct.id}/roles`, { roleUid: role.uid })).status).to.equal(200);
      expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: role.uid })).status).to.equal(200);
      for (const holder of [direct, throughTeam]) expect((await api(app, holder).get('/api/serviceaccounts/search')).status).to.equal(403);

      const edit = await api(app, orgAdmin).put(`/api/access-control/roles/${role.uid}`, {
        version: 1,
        permissions: [{ action: 'serviceaccounts:read', scope: 'serviceaccounts:*' }],
      });
      expect(edit.status).to.equal(200);
      for (const holder of [direct, throughTeam]) {
        expect(await permissions(holder)).to.have.property('serviceaccounts:read');
        expect((await api(app, holder).get('/api/serviceaccounts/search')).status).to.equal(200);
        expect(await liveSessions(app, holder.id)).to.equal(1);
        expect(await auditEntries(app, { action: 'session.revoked', target_id: holder.id })).to.deep.equal([]);
      }
    });

    it('assigning and unassigning a role, and deleting it', async () => {
      const role = buildRole({ permissions: [{ action: 'serviceaccounts:read', scope: 'serviceaccounts:*' }] });
      expect((await api(app, orgAdmin).post('/api/access-control/roles', role)).status).to.equal(201);
      const user = await createUser(app);
      const path = `/api/access-control/users/${user.id}/roles`;

      expect((await api(app, orgAdmin).post(path, { roleUid: role.uid })).status).to.equal(200);
      expect((await api(app, user).get('/api/serviceaccounts/search')).status).to.equal(200);
      expect((await api(app, orgAdmin).delete(`${path}/${role.uid}`)).status).to.equal(200);
      expect((await api(app, user).get('/api/serviceaccounts/search')).status).to.equal(403);
      expect((await api(app, orgAdmin).put(path, { roleUids: [role.uid] })).status).to.equal(200);
      expect(await permissions(user)).to.have.property('serviceaccounts:read');
      expect((await api(app, orgAdmin).delete(`/api/access-control/roles/${role.uid}`)).status).to.equal(200);
      expect(await permissions(user)).not.to.have.property('serviceaccounts:read');

      expect(await liveSessions(app, user.id)).to.equal(1);
      expect(await auditEntries(app, { action: 'session.revoked', target_id: user.id })).to.deep.equal([]);
    });
  });

  describe("a change of the user's own standing ends their sessions", () => {
    const cases: Array<{ name: string; reason: string; change: (user: TestUser) => Promise<{ status: number }> }> = [
      {
        name: 'an org-role change',
        reason: 'org role changed',
        change: (user) => app.request('PATCH', `/api/org/users/${user.id}`, { cookie: orgAdmin.cookie, body: { role: 'Editor' } }),
      },
      {
        name: 'removal from the org',
        reason: 'removed from org',
        change: (user) => app.request('DELETE', `/api/org/users/${user.id}`, { cookie: orgAdmin.cookie }),
      },
      {
        name: 'the server-admin flag',
        reason: 'server admin flag changed',
        change: (user) => api(app, serverAdmin).post(`/api/admin/users/${user.id}/permissions`, { isSvcAdmin: true }),
      },
      { name: 'a disable', reason: 'user disabled', change: (user) => api(app, serverAdmin).post(`/api/admin/users/${user.id}/disable`) },
      {
        name: 'a password reset by an admin',
        reason: 'password changed by admin',
        change: (user) => api(app, serverAdmin).post(`/api/admin/users/${user.id}/password`, { password: 'another long enough password' }),
      },
    ];

    for (const { name, reason, change } of cases) {
      it(name, async () => {
        const user = await createUser(app);
        expect((await api(app, user).get('/api/user')).status).to.equal(200);
        expect((await change(user)).status).to.equal(200);
        expect((await api(app, user).get('/api/user')).status).to.equal(401);
        expect(await liveSessions(app, user.id)).to.equal(0);
        const [revoked] = await auditEntries(app, { action: 'session.revoked', target_id: user.id });
        expect(revoked!.metadata).to.deep.equal({ count: 1, reason });
      });
    }

    it('a password change by the user ends every other session of theirs', async () => {
      const user = await createUser(app);
      const other = { ...user, cookie: await sessionCookie(app, user.id) };
      const res = await api(app, user).put('/api/user/password', { oldPassword: DEFAULT_PASSWORD, newPassword: 'another long enough password' });
      expect(res.status).to.equal(200);
      expect((await api(app, user).get('/api/user')).status).to.equal(200);
      expect((await api(app, other).get('/api/user')).status).to.equal(401);
      expect(await liveSessions(app, user.id)).to.equal(1);
    });
  });
});
