/** Orgs at server level: the members of an org (`/api/orgs/:id/users`), and server admins who administer an org they do not belong to. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  assignRole,
  auditEntries,
  buildOrgWithPeople,
  buildServiceAccount,
  buildTeam,
  buildToken,
  createUser,
  grantManagedPermissions,
  importLegacyAclEntries,
  liveSessions,
  MEMBER_FIELDS,
  sessionCookie,
  setUsersQuota,
  type TestUser,
} from './helpers/factories.ts';

describe('orgs at server level (/api/orgs)', () => {
  let app: TestApp;
  /** Server admin and Admin of org_main. */
  let root: TestUser;
  /** Server admin who belongs to no org. */
  let outsider: TestUser;

  before(async () => {
    app = await startTestApp();
    root = await createUser(app, { svcAdmin: true, role: 'Admin', login: 'root-admin' });
    outsider = await createUser(app, { svcAdmin: true, orgId: null, login: 'outsider-admin' });
  });
  after(async () => {
    await app.close();
  });

  const membership = (orgId: string, userId: string) => app.db('org_members').where({ org_id: orgId, user_id: userId }).first('role');

  describe('members (/api/orgs/:id/users)', () => {
    it('lists the people of the org with their roles, never service accounts', async () => {
      const { orgId, admin, editor, viewer } = await buildOrgWithPeople(app);
      await buildToken(app, await buildServiceAccount(app, { orgId }));
      const res = await api(app, admin).get(`/api/orgs/${orgId}/users`);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('totalCount', 'orgUsers', 'page', 'perPage');
      expect(res.body).to.include({ totalCount: 3, page: 1, perPage: 100 });
      expect(res.body.orgUsers).to.have.length(3);
      for (const member of res.body.orgUsers) expect(member).to.have.all.keys(...MEMBER_FIELDS);
      const byId = new Map(res.body.orgUsers.map((m: { userId: string }) => [m.userId, m]));
      expect(byId.get(admin.id)).to.include({ login: admin.login, email: admin.email, role: 'Admin', lastSeenAt: new Date(app.clock.now()).toISOString() });
      expect(byId.get(editor.id)).to.include({ role: 'Editor' });
      expect(byId.get(viewer.id)).to.include({ role: 'Viewer' });
      expect((byId.get(viewer.id) as { avatarUrl: string }).avatarUrl).to.match(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}/);
      expect((await api(app, root).get('/api/orgs/org_0000000000000000/users')).status).to.be.oneOf([403, 404]);
    });

    it('adds an existing person by login or email, once, and audits it', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app, 'Adding Org');
      const joiner = await createUser(app, { role: 'Viewer' });
      const byEmail = await createUser(app, { orgId: null });
      const res = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login.toUpperCase(), role: 'Editor' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user added to the org', userId: joiner.id });
      expect(await membership(orgId, joiner.id)).to.deep.equal({ role: 'Editor' });
      const [entry] = await auditEntries(app, { action: 'org.member_added', target_id: joiner.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_type: 'user', target_name: joiner.login, outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ org: 'Adding Org', role: 'Editor' });
      // the membership counts at once, and adding changes no session
      expect((await api(app, joiner, orgId).get('/api/org/preferences')).status).to.equal(200);
      expect(await liveSessions(app, joiner.id)).to.equal(1);
      // their default org stays; someone who belonged nowhere lands in this one
      expect((await app.db('users').where('id', joiner.id).first('default_org_id')).default_org_id).to.equal('org_main');
      expect((await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: byEmail.email, role: 'None' })).status).to.equal(200);
      expect((await app.db('users').where('id', byEmail.id).first('default_org_id')).default_org_id).to.equal(orgId);

      const dup = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.email, role: 'Admin' });
      expect(dup.status).to.equal(409);
      expect(dup.body.message).to.match(/already a member/);
      expect(await membership(orgId, joiner.id)).to.deep.equal({ role: 'Editor' });
    });

    it('is 404 for nobody or a service account, 400 on bad input', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      const sa = await buildServiceAccount(app, { orgId: 'org_main' });
      await buildToken(app, sa);
      for (const loginOrEmail of ['nobody-at-all', 'nobody@example.test', sa.login]) {
        const res = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail, role: 'Viewer' });
        expect(res.status, loginOrEmail).to.equal(404);
        expect(res.body.message).to.equal('no user with that login or email');
      }
      for (const body of [
        {},
        { loginOrEmail: 'x' },
        { role: 'Viewer' },
        { loginOrEmail: 'x', role: 'Owner' },
        { loginOrEmail: 5, role: 'Viewer' },
        { loginOrEmail: 'x', role: 'Viewer', orgId: 'o' },
      ]) {
        expect((await api(app, admin).post(`/api/orgs/${orgId}/users`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(await app.count('org_members', { org_id: orgId })).to.equal(3);
    });

    it('enforces the org users quota', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      await setUsersQuota(app, orgId, 3);
      const joiner = await createUser(app);
      const res = await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login, role: 'Viewer' });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.match(/^quota exceeded for users/);
      expect(await membership(orgId, joiner.id)).to.equal(undefined);
      await setUsersQuota(app, orgId, 4);
      expect((await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login, role: 'Viewer' })).status).to.equal(200);
    });

    it('re-roles a member: the change counts at once, their sessions end, it is audited', async () => {
      const { orgId, admin, viewer } = await buildOrgWithPeople(app, 'Rerole Org');
      const res = await api(app, admin).patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Admin' });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'org user updated' });
      expect(await membership(orgId, viewer.id)).to.deep.equal({ role: 'Admin' });
      expect(await liveSessions(app, viewer.id)).to.equal(0);
      expect((await api(app, viewer).get(`/api/orgs/${orgId}`)).status).to.equal(401);
      const fresh = { cookie: await sessionCookie(app, viewer.id) };
      expect((await api(app, fresh).get(`/api/orgs/${orgId}/users`)).status).to.equal(200);
      const [entry] = await auditEntries(app, { action: 'org.member_role_changed', target_id: viewer.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_name: viewer.login, outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ org: 'Rerole Org', from: 'Viewer', to: 'Admin' });
      expect(await auditEntries(app, { action: 'session.revoked', target_id: viewer.id })).to.have.length(1);
      // the same role again is no change: no audit, sessions kept
      expect((await api(app, admin).patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Admin' })).status).to.equal(200);
      expect(await liveSessions(app, viewer.id)).to.equal(1);
      expect(await auditEntries(app, { action: 'org.member_role_changed', target_id: viewer.id })).to.have.length(1);
    });

    it('never demotes or removes the last Admin (400, audited as a failure)', async () => {
      const { orgId, admin, viewer } = await buildOrgWithPeople(app);
      // a service account that is Admin does not count: it cannot administer people
      await buildToken(app, await buildServiceAccount(app, { orgId, role: 'Admin' }));
      for (const [method, body, message] of [
        ['PATCH', { role: 'Editor' }, 'cannot demote the last Admin of the org: make another member Admin first'],
        ['DELETE', undefined, 'cannot remove the last Admin of the org: make another member Admin first'],
      ] as const) {
        const res = await app.request(method, `/api/orgs/${orgId}/users/${admin.id}`, { cookie: admin.cookie, body });
        expect(res.status, method).to.equal(400);
        expect(res.body.message).to.equal(message);
      }
      expect(await membership(orgId, admin.id)).to.deep.equal({ role: 'Admin' });
      expect(await liveSessions(app, admin.id)).to.equal(1);
      const failures = await auditEntries(app, { target_id: admin.id, outcome: 'failure' });
      expect(failures.map((f) => f.action).sort()).to.deep.equal(['org.member_removed', 'org.member_role_changed']);
      for (const failure of failures) expect(failure).to.include({ actor_id: admin.id, org_id: orgId, target_type: 'user' });

      // with a second Admin, the first may step down
      await api(app, admin).patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Admin' });
      expect((await api(app, admin).patch(`/api/orgs/${orgId}/users/${admin.id}`, { role: 'Viewer' })).status).to.equal(200);
      expect(await membership(orgId, admin.id)).to.deep.equal({ role: 'Viewer' });
    });

    it('is 404 for a non-member or a service account, 400 for a bad role', async () => {
      const { orgId, admin } = await buildOrgWithPeople(app);
      const stranger = await createUser(app);
      const sa = await buildServiceAccount(app, { orgId });
      await buildToken(app, sa);
      for (const id of [stranger.id, sa.id, 'usr_doesnotexist']) {
        const patched = await api(app, admin).patch(`/api/orgs/${orgId}/users/${id}`, { role: 'Editor' });
        expect(patched.status, id).to.equal(404);
        expect(patched.body.message).to.equal(`user ${id} is not a member of this org`);
        expect((await api(app, admin).delete(`/api/orgs/${orgId}/users/${id}`)).status, id).to.equal(404);
      }
      for (const body of [{}, { role: 'admin' }, { role: 4 }, { role: 'Editor', extra: 1 }]) {
        expect((await api(app, admin).patch(`/api/orgs/${orgId}/users/${stranger.id}`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(await membership(orgId, sa.id)).to.deep.equal({ role: 'Viewer' });
    });

    it('removes a member with their teams, roles and grants there, ends their sessions, moves their default org', async () => {
      const { orgId, admin, editor } = await buildOrgWithPeople(app, 'Removal Org');
      await addMember(app, 'org_main', editor.id, 'Viewer');
      expect((await api(app, editor).post(`/api/user/using/${orgId}`)).status).to.equal(200);
      const team = (await buildTeam(app, { orgId: orgId, members: [editor.id], preferences: { timezone: 'utc', theme: 'dark' } })).id;
      await assignRole(app, orgId, editor.id, 'fixed:dashboards:reader');
      await grantManagedPermissions(app, orgId, { kind: 'user', userId: editor.id }, [{ action: 'dashboards:read', scope: 'dashboards:uid:d1' }]);
      expect((await api(app, admin, orgId).post('/api/dashboards/db', { dashboard: { uid: 'd1', title: 'D1' } })).status).to.equal(200);
      await importLegacyAclEntries(app, orgId, [{ dashboardUid: 'd1', userId: editor.id, permission: 1 }]);

      const res = await api(app, admin).delete(`/api/orgs/${orgId}/users/${editor.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user removed from the org' });
      expect(await membership(orgId, editor.id)).to.equal(undefined);
      expect(await app.count('team_members', { team_id: team, user_id: editor.id })).to.equal(0);
      expect(await app.count('user_roles', { org_id: orgId, user_id: editor.id })).to.equal(0);
      expect(await app.count('roles', { org_id: orgId, uid: `managed:users:${editor.id}:permissions` })).to.equal(0);
      expect(await app.count('legacy_acl', { org_id: orgId, user_id: editor.id })).to.equal(0);
      expect(await liveSessions(app, editor.id)).to.equal(0);
      expect((await app.db('users').where('id', editor.id).first('default_org_id')).default_org_id).to.equal('org_main');
      const [entry] = await auditEntries(app, { action: 'org.member_removed', target_id: editor.id });
      expect(entry).to.include({ actor_id: admin.id, org_id: orgId, target_name: editor.login, outcome: 'success' });
      expect(entry!.metadata).to.deep.equal({ org: 'Removal Org', role: 'Editor' });
      // the policy dropped them at once
      const fresh = { cookie: await sessionCookie(app, editor.id) };
      expect((await api(app, fresh, orgId).get('/api/org/preferences')).status).to.equal(403);
    });
  });

  describe('a server admin who is not a member (the policy lets server admins administer any org)', () => {
    it('administers any org through /api/orgs/<id>…, but not through /api/org', async () => {
      const { orgId, viewer } = await buildOrgWithPeople(app, 'Administered Org');
      const joiner = await createUser(app);
      const as = api(app, outsider);
      expect((await as.get(`/api/orgs/${orgId}`)).status).to.equal(200);
      expect((await as.get(`/api/orgs/name/${encodeURIComponent('Administered Org')}`)).status).to.equal(200);
      expect((await as.put(`/api/orgs/${orgId}`, { billingEmail: 'root@example.test' })).body.billingEmail).to.equal('root@example.test');
      expect((await as.get(`/api/orgs/${orgId}/users`)).body.totalCount).to.equal(3);
      expect((await as.post(`/api/orgs/${orgId}/users`, { loginOrEmail: joiner.login, role: 'Viewer' })).status).to.equal(200);
      expect((await as.patch(`/api/orgs/${orgId}/users/${viewer.id}`, { role: 'Editor' })).status).to.equal(200);
      expect((await as.delete(`/api/orgs/${orgId}/users/${joiner.id}`)).status).to.equal(200);
      expect(await membership(orgId, outsider.id)).to.equal(undefined);

      const here = api(app, outsider, orgId);
      for (const [method, path] of [
        ['get', '/api/org'],
        ['get', '/api/org/users'],
        ['get', '/api/org/preferences'],
      ] as const) {
        const res = await here[method](path);
        expect(res.status, path).to.equal(403);
      }
      expect((await here.put('/api/org', { name: 'Nope' })).status).to.equal(403);
    });

    it('gets 404 for an unknown org id on every /api/orgs/<id>… endpoint', async () => {
      const as = api(app, outsider);
      const unknown = 'org_0000000000000000';
      for (const [method, path, body] of [
        ['get', `/api/orgs/${unknown}`, undefined],
        ['put', `/api/orgs/${unknown}`, { name: 'Ghost' }],
        ['get', `/api/orgs/${unknown}/users`, undefined],
        ['post', `/api/orgs/${unknown}/users`, { loginOrEmail: 'root-admin', role: 'Viewer' }],
        ['patch', `/api/orgs/${unknown}/users/${root.id}`, { role: 'Viewer' }],
        ['delete', `/api/orgs/${unknown}/users/${root.id}`, undefined],
      ] as const) {
        const res = await as[method](path, body);
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.message).to.equal(`org ${unknown} not found`);
      }
    });
  });
});
