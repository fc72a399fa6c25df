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
  signInAgain,
  type TestUser,
  grantManagedPermissions,
} from './helpers/factories.ts';

/** Any refusal: a policy deny, or the delegation rule's own message. */

const ASSIGNED_ROLE_FIELDS = ['uid', 'name', 'displayName', 'description', 'groupName', 'global', 'hidden', 'version', 'permissions', 'globalAssignment'];

describe('role assignments (/api/access-control/users|teams/…/roles)', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  let viewer: TestUser;
  /** A Viewer given fixed:roles:writer and nothing else. */
  let rolesWriter: TestUser;
  let customUid: string;
  let globalUid: string;

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
    const global = buildRole({ global: true, permissions: [{ action: 'orgs.quotas:read', scope: 'orgs:*' }] });
    expect((await api(app, serverAdmin).post('/api/access-control/roles', global)).status).to.equal(201);
    globalUid = global.uid;
  });
  after(async () => {
    await app.close();
  });

  const userRoleRows = (userId: string) =>
    app.db('user_roles as a').join('roles as r', 'r.id', 'a.role_id').where('a.user_id', userId).orderBy('r.uid').select('r.uid', 'a.org_id');
  const teamRoleUids = (teamId: string) =>
    app.db('team_roles as a').join('roles as r', 'r.id', 'a.role_id').where('a.team_id', teamId).orderBy('r.uid').pluck('r.uid');
  const permissionsOf = async (user: TestUser, orgId?: string) =>
    (await api(app, await signInAgain(app, user), orgId).get('/api/user/permissions')).body as Record<string, string[]>;

  async function insertManagedUserRole(userId: string): Promise<string> {
    const uid = await grantManagedPermissions(app, 'org_main', { kind: 'user', userId }, [{ action: 'dashboards:read', scope: 'dashboards:uid:d1' }]);
    return uid;
  }

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

  describe('users', () => {
    it("POST assigns a role: stored, audited, in force at the assignee's next request on the session they have", async () => {
      const user = await createUser(app, { role: 'Viewer' });
      expect((await api(app, user).get('/api/user/permissions')).body).not.to.have.property('serviceaccounts:read');
      const before = await liveSessions(app, user.id);
      expect(before).to.be.greaterThan(0);

      const res = await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: customUid });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'role assigned to the user' });
      expect(await userRoleRows(user.id)).to.deep.equal([{ uid: customUid, org_id: 'org_main' }]);
      expect(await liveSessions(app, user.id)).to.equal(before);
      const next = await api(app, user).get('/api/user/permissions');
      expect(next.status).to.equal(200);
      expect(next.body).to.have.property('serviceaccounts:read').that.deep.equals(['serviceaccounts:*']);
      expect((await api(app, user).get('/api/serviceaccounts/search')).status).to.equal(200);
      const [audit] = await auditEntries(app, { action: 'role.assigned', target_id: user.id });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_type: 'user', target_name: user.login, outcome: 'success' });
      expect(audit!.metadata).to.deep.equal({ roleUid: customUid, global: false });
      expect(await auditEntries(app, { action: 'session.revoked', target_id: user.id })).to.deep.equal([]);
    });

    it('POST answers 409 when the role is already assigned, 404 on an unknown user, a non-member or an unknown role', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      const path = `/api/access-control/users/${user.id}/roles`;
      expect((await api(app, orgAdmin).post(path, { roleUid: 'fixed:teams:reader' })).status).to.equal(200);
      const dup = await api(app, orgAdmin).post(path, { roleUid: 'fixed:teams:reader' });
      expect(dup.status).to.equal(409);
      expect(dup.body.message).to.equal(`role fixed:teams:reader is already assigned to user ${user.id}`);
      const outsider = await createUser(app, { orgId: await createOrg(app) });
      for (const id of ['usr_doesnotexist0000', outsider.id]) {
        const res = await api(app, orgAdmin).post(`/api/access-control/users/${id}/roles`, { roleUid: 'fixed:teams:reader' });
        expect(res.status, id).to.equal(404);
        expect(res.body.message).to.equal(`user ${id} not found in this org`);
      }
      const unknown = await api(app, orgAdmin).post(path, { roleUid: 'custom:nope' });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.message).to.equal('role custom:nope not found');
      expect(await userRoleRows(user.id)).to.have.length(1);
    });

    it('POST refuses basic and managed roles and bad bodies with 400', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      const managed = await insertManagedUserRole(viewer.id);
      for (const roleUid of ['basic:admin', managed]) {
        const res = await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid });
        expect(res.status, roleUid).to.equal(400);
        expect(res.body.message).to.match(/^(basic|managed) role /);
      }
      for (const body of [{}, { roleUid: 7 }, { roleUid: '' }, { roleUid: customUid, global: 'no' }, { roleUid: customUid, extra: 1 }]) {
        expect((await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect(await userRoleRows(user.id)).to.deep.equal([]);
    });

    it('a global assignment is for server admins, of global roles, and applies in every org of the user', async () => {
      const other = await createOrg(app);
      const user = await createUser(app, { role: 'Viewer' });
      await addMember(app, other, user.id, 'Viewer');
      const path = `/api/access-control/users/${user.id}/roles`;
      expect((await api(app, orgAdmin).post(path, { roleUid: globalUid, global: true })).status).to.equal(403);
      const orgRole = await api(app, serverAdmin).post(path, { roleUid: customUid, global: true });
      expect(orgRole.status).to.equal(404);
      expect(orgRole.body.message).to.equal(`global role ${customUid} not found`);

      expect((await api(app, serverAdmin).post(path, { roleUid: globalUid, global: true })).status).to.equal(200);
      expect(await userRoleRows(user.id)).to.deep.equal([{ uid: globalUid, org_id: null }]);
      expect((await api(app, serverAdmin).post(path, { roleUid: globalUid, global: true })).status).to.equal(409);
      expect(await permissionsOf(user)).to.have.property('orgs.quotas:read');
      expect(await permissionsOf(user, other)).to.have.property('orgs.quotas:read');
      const [audit] = await auditEntries(app, { action: 'role.assigned', target_id: user.id });
      expect(audit).to.include({ org_id: null });
      expect(audit!.metadata).to.deep.equal({ roleUid: globalUid, global: true });

      // a global role may also be assigned in one org only
      const inOrg = await createUser(app, { role: 'Viewer' });
      expect((await api(app, orgAdmin).post(`/api/access-control/users/${inOrg.id}/roles`, { roleUid: globalUid })).status).to.equal(200);
      expect(await userRoleRows(inOrg.id)).to.deep.equal([{ uid: globalUid, org_id: 'org_main' }]);

      const list = await api(app, orgAdmin).get(`/api/access-control/users/${user.id}/roles`);
      expect(list.body.roles.map((r: { uid: string; globalAssignment: boolean }) => [r.uid, r.globalAssignment])).to.deep.equal([[globalUid, true]]);

      expect((await api(app, orgAdmin).delete(`/api/access-control/users/${user.id}/roles/${globalUid}?global=true`)).status).to.equal(403);
      expect((await api(app, orgAdmin).delete(`/api/access-control/users/${user.id}/roles/${globalUid}`)).status).to.equal(404);
      expect((await api(app, serverAdmin).delete(`/api/access-control/users/${user.id}/roles/${globalUid}?global=true`)).status).to.equal(200);
      expect(await userRoleRows(user.id)).to.deep.equal([]);
      expect(await permissionsOf(user, other)).not.to.have.property('orgs.quotas:read');
    });

    it('GET lists the directly assigned roles (global ones too, not the basic role), managed ones with includeHidden', async () => {
      const user = await createUser(app, { role: 'Editor' });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: customUid });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: 'fixed:teams:reader' });
      await api(app, serverAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: globalUid, global: true });
      const managed = await insertManagedUserRole(user.id);

      const res = await api(app, orgAdmin).get(`/api/access-control/users/${user.id}/roles`);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('totalCount', 'roles', 'page', 'perPage');
      expect(res.body.totalCount).to.equal(3);
      for (const role of res.body.roles) expect(role).to.have.all.keys(...ASSIGNED_ROLE_FIELDS);
      expect(res.body.roles.map((r: { uid: string }) => r.uid)).to.deep.equal([customUid, globalUid, 'fixed:teams:reader'].sort());
      expect(res.body.roles.find((r: { uid: string }) => r.uid === 'fixed:teams:reader')).to.deep.include({
        globalAssignment: false,
        global: false,
        permissions: [{ action: 'teams:read', scope: 'teams:*' }],
      });
      expect(res.body.roles.find((r: { uid: string }) => r.uid === globalUid)).to.include({ globalAssignment: true, global: true });

      const hidden = await api(app, orgAdmin).get(`/api/access-control/users/${user.id}/roles?includeHidden=true`);
      expect(hidden.body.totalCount).to.equal(4);
      expect(hidden.body.roles.find((r: { uid: string }) => r.uid === managed)).to.include({ hidden: true });
      const paged = await api(app, orgAdmin).get(`/api/access-control/users/${user.id}/roles?perpage=1&page=2`);
      expect(paged.body).to.include({ totalCount: 3, page: 2, perPage: 1 });
      expect(paged.body.roles.map((r: { uid: string }) => r.uid)).to.deep.equal([res.body.roles[1].uid]);

      const reader = await createUser(app, { role: 'Viewer' });
      await assignRole(app, 'org_main', reader.id, 'fixed:roles:reader');
      expect((await api(app, reader).get(`/api/access-control/users/${user.id}/roles`)).status).to.equal(200);
      expect((await api(app, orgAdmin).get('/api/access-control/users/usr_doesnotexist0000/roles')).status).to.equal(404);
      expect((await api(app, orgAdmin).get(`/api/access-control/users/${user.id}/roles?includeHidden=perhaps`)).status).to.equal(400);
    });

    it('DELETE unassigns: gone, audited, no longer in force at the next request of the session the user has; 404 when not assigned', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: customUid });
      const signedIn = await signInAgain(app, user);
      expect((await api(app, signedIn).get('/api/user/permissions')).body).to.have.property('serviceaccounts:read');

      const res = await api(app, orgAdmin).delete(`/api/access-control/users/${user.id}/roles/${customUid}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'role unassigned from the user' });
      expect(await userRoleRows(user.id)).to.deep.equal([]);
      expect(await liveSessions(app, user.id)).to.equal(2);
      expect((await api(app, signedIn).get('/api/user/permissions')).body).not.to.have.property('serviceaccounts:read');
      expect((await api(app, signedIn).get('/api/serviceaccounts/search')).status).to.equal(403);
      const [audit] = await auditEntries(app, { action: 'role.unassigned', target_id: user.id });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_type: 'user' });
      expect(audit!.metadata).to.deep.equal({ roleUid: customUid, global: false });

      const again = await api(app, orgAdmin).delete(`/api/access-control/users/${user.id}/roles/${customUid}`);
      expect(again.status).to.equal(404);
      expect(again.body.message).to.equal(`role ${customUid} is not assigned to user ${user.id}`);
      expect((await api(app, orgAdmin).delete(`/api/access-control/users/${user.id}/roles/custom:nope`)).status).to.equal(404);
      expect((await api(app, orgAdmin).delete(`/api/access-control/users/usr_doesnotexist0000/roles/${customUid}`)).status).to.equal(404);
      expect((await api(app, orgAdmin).delete(`/api/access-control/users/${user.id}/roles/${customUid}?global=sometimes`)).status).to.equal(400);
    });

    it('PUT replaces the assigned roles of the org, leaving managed and global ones alone', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: customUid });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: 'fixed:teams:reader' });
      await api(app, serverAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: globalUid, global: true });
      const managed = await insertManagedUserRole(user.id);
      const signedIn = await signInAgain(app, user);

      const res = await api(app, orgAdmin).put(`/api/access-control/users/${user.id}/roles`, {
        roleUids: ['fixed:teams:reader', 'fixed:folders:reader', 'fixed:folders:reader'],
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'roles of the user updated', added: ['fixed:folders:reader'], removed: [customUid] });
      expect(await userRoleRows(user.id)).to.deep.equal(
        [
          { uid: 'fixed:folders:reader', org_id: 'org_main' },
          { uid: 'fixed:teams:reader', org_id: 'org_main' },
          { uid: globalUid, org_id: null },
          { uid: managed, org_id: 'org_main' },
        ].sort((a, b) => a.uid.localeCompare(b.uid)),
      );
      expect(await liveSessions(app, signedIn.id)).to.equal(2);
      const permissions = (await api(app, signedIn).get('/api/user/permissions')).body;
      expect(permissions).to.have.property('folders:read');
      expect(permissions).not.to.have.property('serviceaccounts:read');
      expect((await auditEntries(app, { action: 'role.assigned', target_id: user.id })).map((a) => a.metadata!.roleUid)).to.include('fixed:folders:reader');
      expect((await auditEntries(app, { action: 'role.unassigned', target_id: user.id })).map((a) => a.metadata!.roleUid)).to.deep.equal([customUid]);

      // the same set again changes nothing and signs nobody out
      const fresh = await signInAgain(app, user);
      const sessions = await liveSessions(app, user.id);
      const same = await api(app, orgAdmin).put(`/api/access-control/users/${user.id}/roles`, { roleUids: ['fixed:folders:reader', 'fixed:teams:reader'] });
      expect(same.body).to.include({ message: 'roles of the user updated' }).and.deep.include({ added: [], removed: [] });
      expect(await liveSessions(app, user.id)).to.equal(sessions);
      expect((await api(app, fresh).get('/api/user')).status).to.equal(200);

      const cleared = await api(app, orgAdmin).put(`/api/access-control/users/${user.id}/roles`, { roleUids: [] });
      expect(cleared.body.removed).to.deep.equal(['fixed:folders:reader', 'fixed:teams:reader']);
      expect((await userRoleRows(user.id)).map((r: { uid: string }) => r.uid).sort()).to.deep.equal([globalUid, managed].sort());
    });

    it('PUT rejects unknown roles (404), basic roles and bad bodies (400), changing nothing', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: customUid });
      const path = `/api/access-control/users/${user.id}/roles`;
      expect((await api(app, orgAdmin).put(path, { roleUids: ['fixed:teams:reader', 'custom:nope'] })).status).to.equal(404);
      expect((await api(app, orgAdmin).put(path, { roleUids: ['basic:editor'] })).status).to.equal(400);
      for (const body of [{}, { roleUids: 'fixed:teams:reader' }, { roleUids: [1] }, { roleUids: [], extra: true }]) {
        expect((await api(app, orgAdmin).put(path, body)).status, JSON.stringify(body)).to.equal(400);
      }
      expect((await api(app, orgAdmin).put('/api/access-control/users/usr_doesnotexist0000/roles', { roleUids: [] })).status).to.equal(404);
      expect(await userRoleRows(user.id)).to.deep.equal([{ uid: customUid, org_id: 'org_main' }]);
      expect((await api(app, orgAdmin).put(path, { roleUids: [globalUid], global: true })).status).to.equal(403);
    });

    describe('delegation', () => {
      it('an org Admin may assign any role', async () => {
        const user = await createUser(app, { role: 'Viewer' });
        expect((await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: 'fixed:dashboards:writer' })).status).to.equal(200);
      });

      it('a holder of fixed:roles:writer assigns roles whose permissions it holds', async () => {
        const user = await createUser(app, { role: 'Viewer' });
        expect((await api(app, rolesWriter).post(`/api/access-control/users/${user.id}/roles`, { roleUid: 'fixed:roles:reader' })).status).to.equal(200);
      });

      it('a holder of fixed:roles:writer cannot assign fixed:dashboards:writer: 403', async () => {
        const user = await createUser(app, { role: 'Viewer' });
        const res = await api(app, rolesWriter).post(`/api/access-control/users/${user.id}/roles`, { roleUid: 'fixed:dashboards:writer' });
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DELEGATION_DENIED);
        expect(await userRoleRows(user.id)).to.deep.equal([]);
      });

      it('nor take it away, by DELETE or by PUT', async () => {
        const user = await createUser(app, { role: 'Viewer' });
        await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: 'fixed:dashboards:writer' });
        expect((await api(app, rolesWriter).delete(`/api/access-control/users/${user.id}/roles/fixed:dashboards:writer`)).status).to.equal(403);
        expect((await api(app, rolesWriter).put(`/api/access-control/users/${user.id}/roles`, { roleUids: ['fixed:roles:reader'] })).status).to.equal(403);
        expect(await userRoleRows(user.id)).to.deep.equal([{ uid: 'fixed:dashboards:writer', org_id: 'org_main' }]);
      });
    });
  });

  describe('teams', () => {
    it('POST assigns a role to a team: every member gets it at their next request, on the session they have', async () => {
      const team = (await buildTeam(app, { orgId: 'org_main', name: 'Assigned Team' })).id;
      const [a, b] = [await createUser(app, { role: 'Viewer' }), await createUser(app, { role: 'Viewer' })];
      const outsider = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, a.id);
      await addTeamMember(app, team, b.id);

      const res = await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: customUid });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'role assigned to the team' });
      expect(await teamRoleUids(team)).to.deep.equal([customUid]);
      for (const member of [a, b]) {
        expect(await liveSessions(app, member.id)).to.equal(1);
        expect((await api(app, member).get('/api/user/permissions')).body).to.have.property('serviceaccounts:read');
      }
      expect(await liveSessions(app, outsider.id)).to.equal(1);
      expect(await permissionsOf(outsider)).not.to.have.property('serviceaccounts:read');
      const [audit] = await auditEntries(app, { action: 'role.assigned', target_id: team });
      expect(audit).to.include({ actor_id: orgAdmin.id, org_id: 'org_main', target_type: 'team', target_name: 'Assigned Team' });
      expect(audit!.metadata).to.deep.equal({ roleUid: customUid, global: false });

      expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: customUid })).status).to.equal(409);
      expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: customUid, global: true })).status).to.equal(400);
      expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: 'custom:nope' })).status).to.equal(404);
      expect((await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: 'basic:viewer' })).status).to.equal(400);
    });

    it('a team of another org is not found', async () => {
      const other = await createOrg(app);
      const foreign = (await buildTeam(app, { orgId: other })).id;
      for (const [method, path, body] of [
        ['GET', `/api/access-control/teams/${foreign}/roles`],
        ['POST', `/api/access-control/teams/${foreign}/roles`, { roleUid: 'fixed:teams:reader' }],
        ['DELETE', `/api/access-control/teams/${foreign}/roles/fixed:teams:reader`],
        ['PUT', `/api/access-control/teams/${foreign}/roles`, { roleUids: [] }],
        ['GET', '/api/access-control/teams/team_doesnotexist00/roles'],
      ] as Array<[string, string, unknown?]>) {
        const res = await app.request(method, path, { cookie: orgAdmin.cookie, body });
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.body.message).to.match(/^team \S+ not found$/);
      }
      expect(await teamRoleUids(foreign)).to.deep.equal([]);
    });

    it('GET lists, DELETE unassigns and PUT replaces the roles of a team', async () => {
      const team = (await buildTeam(app)).id;
      const member = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, member.id);
      await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: 'fixed:teams:reader' });
      await api(app, orgAdmin).post(`/api/access-control/teams/${team}/roles`, { roleUid: globalUid });

      const list = await api(app, orgAdmin).get(`/api/access-control/teams/${team}/roles`);
      expect(list.status).to.equal(200);
      expect(list.body.totalCount).to.equal(2);
      for (const role of list.body.roles) expect(role).to.have.all.keys(...ASSIGNED_ROLE_FIELDS);
      expect(list.body.roles.map((r: { uid: string }) => r.uid)).to.deep.equal([globalUid, 'fixed:teams:reader'].sort());

      const signedIn = await signInAgain(app, member);
      const removed = await api(app, orgAdmin).delete(`/api/access-control/teams/${team}/roles/${globalUid}`);
      expect(removed.status).to.equal(200);
      expect(await teamRoleUids(team)).to.deep.equal(['fixed:teams:reader']);
      expect(await liveSessions(app, signedIn.id)).to.equal(2);
      expect((await api(app, signedIn).get('/api/user/permissions')).body).not.to.have.property('orgs.quotas:read');
      expect((await auditEntries(app, { action: 'role.unassigned', target_id: team }))[0]!.metadata).to.deep.equal({ roleUid: globalUid, global: false });
      expect((await api(app, orgAdmin).delete(`/api/access-control/teams/${team}/roles/${globalUid}`)).status).to.equal(404);

      const replaced = await api(app, orgAdmin).put(`/api/access-control/teams/${team}/roles`, { roleUids: [customUid] });
      expect(replaced.status).to.equal(200);
      expect(replaced.body).to.deep.equal({ message: 'roles of the team updated', added: [customUid], removed: ['fixed:teams:reader'] });
      expect(await teamRoleUids(team)).to.deep.equal([customUid]);
      expect(await permissionsOf(member)).to.have.property('serviceaccounts:read');
      expect((await api(app, orgAdmin).put(`/api/access-control/teams/${team}/roles`, { roleUids: [], global: true })).status).to.equal(400);
    });

    it('delegation: a holder of fixed:roles:writer cannot give a team fixed:dashboards:writer', async () => {
      const team = (await buildTeam(app)).id;
      expect((await api(app, rolesWriter).post(`/api/access-control/teams/${team}/roles`, { roleUid: 'fixed:dashboards:writer' })).status).to.equal(403);
      expect((await api(app, rolesWriter).put(`/api/access-control/teams/${team}/roles`, { roleUids: ['fixed:dashboards:writer'] })).status).to.equal(403);
      expect(await teamRoleUids(team)).to.deep.equal([]);
      expect((await api(app, rolesWriter).post(`/api/access-control/teams/${team}/roles`, { roleUid: 'fixed:roles:reader' })).status).to.equal(200);
    });
  });

  describe('GET /api/access-control/users/:userId/permissions', () => {
    it("answers the user's resolved permissions in the active org", async () => {
      const user = await createUser(app, { role: 'Viewer' });
      await api(app, orgAdmin).post(`/api/access-control/users/${user.id}/roles`, { roleUid: customUid });
      const res = await api(app, orgAdmin).get(`/api/access-control/users/${user.id}/permissions`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal(await permissionsOf(user));
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
