/** Role assignments of teams (`/api/access-control/teams/:teamId/roles`): every member holds the team's roles. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addTeamMember,
  api,
  assignRole,
  auditEntries,
  buildRole,
  buildTeam,
  createOrg,
  createUser,
  liveSessions,
  permissionsOf,
  signInAgain,
  type TestUser,
} from './helpers/factories.ts';

const ASSIGNED_ROLE_FIELDS = ['uid', 'name', 'displayName', 'description', 'groupName', 'global', 'hidden', 'version', 'permissions', 'globalAssignment'];

describe('role assignments (/api/access-control/users|teams/…/roles)', () => {
  let app: TestApp;
  let serverAdmin: TestUser;
  let orgAdmin: TestUser;
  /** A Viewer given fixed:roles:writer and nothing else. */
  let rolesWriter: TestUser;
  let customUid: string;
  let globalUid: string;

  before(async () => {
    app = await startTestApp();
    serverAdmin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
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

  const teamRoleUids = (teamId: string) =>
    app.db('team_roles as a').join('roles as r', 'r.id', 'a.role_id').where('a.team_id', teamId).orderBy('r.uid').pluck('r.uid');

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
      expect(await permissionsOf(app, await signInAgain(app, outsider))).not.to.have.property('serviceaccounts:read');
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
      expect(await permissionsOf(app, await signInAgain(app, member))).to.have.property('serviceaccounts:read');
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
});
