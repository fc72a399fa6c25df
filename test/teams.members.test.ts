/** Teams: members (`/api/teams/:id/members`) and the rights a team Admin (4) holds. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  addTeamMember,
  api,
  assignRoleToTeam,
  auditEntries,
  buildServiceAccount,
  buildTeam,
  createOrg,
  createUser,
  expectAuditEntry,
  permissionsOf,
  teamAdminActions,
  type TestTeam,
  type TestUser,
} from './helpers/factories.ts';

const MEMBER_FIELDS = ['orgId', 'teamId', 'userId', 'login', 'email', 'name', 'permission', 'avatarUrl'];
const ADMIN_ACTIONS = ['team.permissions:read', 'team.permissions:write', 'teams:read', 'teams:write'];

describe('teams', () => {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  let otherOrg: string;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin', login: 'team-admin-root' });
    viewer = await createUser(app, { role: 'Viewer' });
    otherOrg = await createOrg(app, { name: 'Other Teams Org' });
    await addMember(app, otherOrg, admin.id, 'Admin');
  });
  after(async () => {
    await app.close();
  });

  async function expectAudited(action: string, team: { id: string; name: string }, actor: TestUser, metadata?: Record<string, unknown>) {
    const fields = { actor_type: 'user', actor_id: actor.id, org_id: 'org_main', target_type: 'team', target_name: team.name, outcome: 'success' };
    await expectAuditEntry(app, { action, target_id: team.id }, { ...fields, ...(metadata && { metadata }) });
  }

  const memberRow = (team: TestTeam, userId: string) => app.db('team_members').where({ team_id: team.id, user_id: userId }).first();

  describe('team members', () => {
    it('GET lists the members with their permission, by login', async () => {
      const team = await buildTeam(app);
      const first = await createUser(app, { login: 'aaa-member', name: 'Ann' });
      const second = await createUser(app, { login: 'bbb-member' });
      await addTeamMember(app, team, second.id, 4);
      await addTeamMember(app, team, first.id);
      const res = await api(app, viewer).get(`/api/teams/${team.id}/members`);
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ totalCount: 2, page: 1, perPage: 100 });
      const members = res.body.teamMembers;
      expect(members).to.have.length(2);
      for (const member of members) expect(member).to.have.all.keys(...MEMBER_FIELDS);
      expect(members[0]).to.include({
        orgId: 'org_main',
        teamId: team.id,
        userId: first.id,
        login: 'aaa-member',
        email: first.email,
        name: 'Ann',
        permission: 0,
      });
      expect(members[1]).to.include({ userId: second.id, permission: 4 });
      expect(members[0].avatarUrl).to.match(/^https:\/\/secure\.gravatar\.com\/avatar\//);
      expect((await api(app, viewer).get(`/api/teams/${(await buildTeam(app)).id}/members`)).body).to.deep.equal({
        totalCount: 0,
        teamMembers: [],
        page: 1,
        perPage: 100,
      });
    });

    it('POST adds an org member as Member (0): 200 with the member, audited, visible to the next authorize', async () => {
      const team = await buildTeam(app);
      await assignRoleToTeam(app, team, 'fixed:org.users:reader');
      const user = await createUser(app, { role: 'Viewer' });
      expect(await permissionsOf(app, user)).to.not.have.property('org.users:read');

      const res = await api(app, admin).post(`/api/teams/${team.id}/members`, { userId: user.id });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...MEMBER_FIELDS);
      expect(res.body).to.include({ teamId: team.id, userId: user.id, login: user.login, permission: 0 });
      expect(await memberRow(team, user.id)).to.include({ permission: 0 });
      await expectAudited('team.member_added', team, admin, { userId: user.id, login: user.login, permission: 0 });
      expect((await permissionsOf(app, user))['org.users:read']).to.deep.equal(['users:*']);
      expect((await api(app, admin).get(`/api/teams/${team.id}`)).body.memberCount).to.equal(1);

      const again = await api(app, admin).post(`/api/teams/${team.id}/members`, { userId: user.id });
      expect(again.status).to.equal(409);
      expect(await app.count('team_members', { team_id: team.id })).to.equal(1);
    });

    it('POST answers 400 for a user outside the org, an unknown user, a service account, or a bad body', async () => {
      const team = await buildTeam(app);
      const foreigner = await createUser(app, { orgId: otherOrg });
      const sa = await buildServiceAccount(app);
      const bodies: unknown[] = [
        { userId: foreigner.id },
        { userId: 'usr_doesnotexist0000' },
        { userId: sa.id },
        {},
        { userId: 42 },
        { userId: '' },
        { userId: viewer.id, permission: 4 },
      ];
      for (const body of bodies) {
        const res = await api(app, admin).post(`/api/teams/${team.id}/members`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await api(app, admin).post(`/api/teams/${team.id}/members`, { userId: foreigner.id })).body.message).to.equal(
        `user ${foreigner.id} is not a member of this org`,
      );
      expect(await app.count('team_members', { team_id: team.id })).to.equal(0);
    });

    it('PUT makes a member Admin (4) and back: the managed role carries the rights, audited both ways', async () => {
      const team = await buildTeam(app);
      const user = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, user.id);

      const promoted = await api(app, admin).put(`/api/teams/${team.id}/members/${user.id}`, { permission: 4 });
      expect(promoted.status).to.equal(200);
      expect(promoted.body).to.have.all.keys(...MEMBER_FIELDS);
      expect(promoted.body).to.include({ userId: user.id, permission: 4 });
      expect(await memberRow(team, user.id)).to.include({ permission: 4 });
      const role = await app
        .db('roles')
        .where({ org_id: 'org_main', uid: `managed:users:${user.id}:permissions` })
        .first();
      expect(role).to.include({ name: `managed:users:${user.id}:permissions` });
      expect(!!role.hidden).to.equal(true);
      expect(await app.count('user_roles', { user_id: user.id, role_id: role.id, org_id: 'org_main' })).to.equal(1);
      expect(await teamAdminActions(app, user.id, team)).to.deep.equal(ADMIN_ACTIONS);
      await expectAudited('team.member_updated', team, admin, { userId: user.id, login: user.login, permission: 4, previousPermission: 0 });
      const granted = await permissionsOf(app, user);
      expect(granted['teams:write']).to.deep.equal([`teams:id:${team.id}`]);
      expect(granted['team.permissions:write']).to.deep.equal([`teams:id:${team.id}`]);

      const demoted = await api(app, admin).put(`/api/teams/${team.id}/members/${user.id}`, { permission: 0 });
      expect(demoted.status).to.equal(200);
      expect(demoted.body).to.include({ permission: 0 });
      expect(await teamAdminActions(app, user.id, team)).to.deep.equal([]);
      await expectAudited('team.member_updated', team, admin, { userId: user.id, login: user.login, permission: 0, previousPermission: 4 });
      expect(await permissionsOf(app, user)).to.not.have.property('teams:write');

      const same = await api(app, admin).put(`/api/teams/${team.id}/members/${user.id}`, { permission: 0 });
      expect(same.status).to.equal(200);
      expect(await auditEntries(app, { action: 'team.member_updated', target_id: team.id })).to.have.length(2);
    });

    it('PUT answers 404 for a user who is not in the team and 400 for a bad permission', async () => {
      const team = await buildTeam(app);
      await addTeamMember(app, team, viewer.id);
      const stranger = await createUser(app);
      const missing = await api(app, admin).put(`/api/teams/${team.id}/members/${stranger.id}`, { permission: 4 });
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.equal(`user ${stranger.id} is not a member of team ${team.id}`);
      for (const body of [{}, { permission: 2 }, { permission: 1 }, { permission: '4' }, { permission: 4, extra: 1 }]) {
        const res = await api(app, admin).put(`/api/teams/${team.id}/members/${viewer.id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect(await memberRow(team, viewer.id)).to.include({ permission: 0 });
      expect(await app.count('role_permissions', { scope: `teams:id:${team.id}` })).to.equal(0);
    });

    it('DELETE removes the member and its admin rights, audited; a non-member is 404', async () => {
      const team = await buildTeam(app);
      await assignRoleToTeam(app, team, 'fixed:org.users:reader');
      const user = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, user.id, 4);
      expect((await permissionsOf(app, user))['org.users:read']).to.deep.equal(['users:*']);

      const res = await api(app, admin).delete(`/api/teams/${team.id}/members/${user.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'team member removed' });
      expect(await memberRow(team, user.id)).to.equal(undefined);
      expect(await teamAdminActions(app, user.id, team)).to.deep.equal([]);
      await expectAudited('team.member_removed', team, admin, { userId: user.id, login: user.login });
      const after = await permissionsOf(app, user);
      expect(after).to.not.have.property('org.users:read');
      expect(after).to.not.have.property('teams:write');

      const again = await api(app, admin).delete(`/api/teams/${team.id}/members/${user.id}`);
      expect(again.status).to.equal(404);
    });
  });

  describe('team admins', () => {
    it('a team Admin who is an org Viewer manages its own team, not another, and loses it at demotion', async () => {
      const own = await buildTeam(app, { name: 'Own Team' });
      const other = await buildTeam(app, { name: 'Other Team' });
      const lead = await createUser(app, { role: 'Viewer' });
      const recruit = await createUser(app, { role: 'Viewer' });
      const second = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, own, lead.id);
      expect((await api(app, lead).post(`/api/teams/${own.id}/members`, { userId: recruit.id })).status).to.equal(403);

      expect((await api(app, admin).put(`/api/teams/${own.id}/members/${lead.id}`, { permission: 4 })).status).to.equal(200);
      const added = await api(app, lead).post(`/api/teams/${own.id}/members`, { userId: recruit.id });
      expect(added.status).to.equal(200);
      await expectAudited('team.member_added', own, lead, { userId: recruit.id, login: recruit.login, permission: 0 });
      const renamed = await api(app, lead).put(`/api/teams/${own.id}`, { name: 'Own Team Renamed' });
      expect(renamed.status).to.equal(200);
      expect(renamed.body.name).to.equal('Own Team Renamed');
      expect((await api(app, lead).put(`/api/teams/${own.id}/preferences`, { timezone: 'utc' })).status).to.equal(200);
      expect((await api(app, lead).put(`/api/teams/${own.id}/members/${recruit.id}`, { permission: 4 })).status).to.equal(200);
      expect((await api(app, lead).delete(`/api/teams/${own.id}/members/${recruit.id}`)).status).to.equal(200);

      expect((await api(app, lead).post(`/api/teams/${other.id}/members`, { userId: second.id })).status).to.equal(403);
      expect((await api(app, lead).put(`/api/teams/${other.id}`, { name: 'Taken Over' })).status).to.equal(403);
      expect((await api(app, lead).put(`/api/teams/${other.id}/preferences`, { timezone: 'utc' })).status).to.equal(403);
      expect((await api(app, lead).post('/api/teams', { name: 'Lead Made' })).status).to.equal(403);
      expect(await app.count('team_members', { team_id: other.id })).to.equal(0);

      expect((await api(app, admin).put(`/api/teams/${own.id}/members/${lead.id}`, { permission: 0 })).status).to.equal(200);
      const after = await api(app, lead).post(`/api/teams/${own.id}/members`, { userId: second.id });
      expect(after.status).to.equal(403);
      expect((await api(app, lead).put(`/api/teams/${own.id}`, { name: 'Again' })).status).to.equal(403);
      expect(await app.db('teams').where('id', own.id).first('name')).to.deep.equal({ name: 'Own Team Renamed' });
    });

    it('admin rights are per org: the managed role of the team org carries them', async () => {
      const foreign = await buildTeam(app, { orgId: otherOrg });
      const user = await createUser(app, { role: 'Viewer' });
      await addMember(app, otherOrg, user.id, 'None');
      await addTeamMember(app, foreign, user.id, 4);
      expect(await app.count('roles', { org_id: 'org_main', uid: `managed:users:${user.id}:permissions` })).to.equal(0);
      expect((await permissionsOf(app, user))['teams:write']).to.equal(undefined);
      const res = await api(app, user, otherOrg).put(`/api/teams/${foreign.id}`, { email: 'x@example.test' });
      expect(res.status).to.equal(200);
    });
  });
});
