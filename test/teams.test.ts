/** Teams (`/api/teams`): access to every team endpoint, and creating, reading, changing and deleting a team. */
import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  addTeamMember,
  api,
  assignRole,
  assignRoleToTeam,
  auditEntries,
  buildTeam,
  createOrg,
  createUser,
  DENIED,
  expectAuditEntry,
  grantManagedPermissions,
  importLegacyAclEntries,
  permissionsOf,
  teamAdminActions,
  type TestTeam,
  type TestUser,
} from './helpers/factories.ts';

const TEAM_FIELDS = ['id', 'orgId', 'name', 'email', 'avatarUrl', 'memberCount'];
const UNKNOWN_TEAM = 'team_doesnotexist00';
const ADMIN_ACTIONS = ['team.permissions:read', 'team.permissions:write', 'teams:read', 'teams:write'];

describe('teams', () => {
  let app: TestApp;
  let admin: TestUser;
  let viewer: TestUser;
  /** A member of org_main with org role None: no teams:read of its own. */
  let outsider: TestUser;
  let otherOrg: string;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { role: 'Admin', login: 'team-admin-root' });
    viewer = await createUser(app, { role: 'Viewer' });
    outsider = await createUser(app, { role: 'None' });
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

  describe('access', () => {
    // `readable`: a Viewer may; the 403 case is then a member with org role None.
    const endpoints: Array<{ method: string; path: (teamId: string, userId: string) => string; body?: unknown; readable?: boolean }> = [
      { method: 'POST', path: () => '/api/teams', body: { name: 'intruders' } },
      { method: 'GET', path: () => '/api/teams/search', readable: true },
      { method: 'GET', path: (t) => `/api/teams/${t}`, readable: true },
      { method: 'PUT', path: (t) => `/api/teams/${t}`, body: { name: 'intruders' } },
      { method: 'DELETE', path: (t) => `/api/teams/${t}` },
      { method: 'GET', path: (t) => `/api/teams/${t}/members`, readable: true },
      { method: 'POST', path: (t) => `/api/teams/${t}/members`, body: { userId: 'usr_x' } },
      { method: 'PUT', path: (t, u) => `/api/teams/${t}/members/${u}`, body: { permission: 4 } },
      { method: 'DELETE', path: (t, u) => `/api/teams/${t}/members/${u}` },
      { method: 'GET', path: (t) => `/api/teams/${t}/preferences`, readable: true },
      { method: 'PUT', path: (t) => `/api/teams/${t}/preferences`, body: { theme: 'light' } },
    ];

    const onATeam = (endpoint: (typeof endpoints)[number]) => endpoint.path('TEAM', 'USER').includes('TEAM');

    for (const endpoint of endpoints) {
      const name = `${endpoint.method} ${endpoint.path(':id', ':userId')}`;

      it(`${name} is 401 without credentials`, async () => {
        const team = await buildTeam(app);
        const res = await app.request(endpoint.method, endpoint.path(team.id, viewer.id), { body: endpoint.body });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.be.a('string');
      });

      it(`${name} is 403 for ${endpoint.readable ? 'a member with org role None' : 'a Viewer'}, and changes nothing`, async () => {
        const team = await buildTeam(app);
        const member = await createUser(app);
        await addTeamMember(app, team, member.id);
        const caller = endpoint.readable ? outsider : viewer;
        const auditsBefore = await app.count('audit_log', { outcome: 'success' });
        const teamsBefore = await app.db('teams').orderBy('id').select('*');
        const res = await app.request(endpoint.method, endpoint.path(team.id, member.id), { cookie: caller.cookie, body: endpoint.body });
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
        expect(await app.db('teams').orderBy('id').select('*')).to.deep.equal(teamsBefore);
        expect(await memberRow(team, member.id)).to.include({ permission: 0 });
        expect(await app.count('audit_log', { outcome: 'success' })).to.equal(auditsBefore);
      });
    }

    it('authorizes before it looks the team up: an unknown team is 403 for a Viewer, 404 for an admin', async () => {
      for (const endpoint of endpoints.filter((e) => !e.readable && onATeam(e))) {
        const denied = await app.request(endpoint.method, endpoint.path(UNKNOWN_TEAM, viewer.id), { cookie: viewer.cookie, body: endpoint.body });
        expect(denied.status, `${endpoint.method} ${endpoint.path(':id', ':userId')}`).to.equal(403);
      }
      for (const endpoint of endpoints.filter((e) => onATeam(e))) {
        const res = await app.request(endpoint.method, endpoint.path(UNKNOWN_TEAM, viewer.id), { cookie: admin.cookie, body: endpoint.body });
        expect(res.status, `${endpoint.method} ${endpoint.path(':id', ':userId')}`).to.equal(404);
        expect(res.body.message).to.equal(`team ${UNKNOWN_TEAM} not found`);
      }
    });

    it('a team of another org is 404 in the active org, on every team endpoint', async () => {
      const foreign = await buildTeam(app, { orgId: otherOrg });
      for (const endpoint of endpoints.filter((e) => onATeam(e))) {
        const res = await app.request(endpoint.method, endpoint.path(foreign.id, admin.id), { cookie: admin.cookie, body: endpoint.body });
        expect(res.status, `${endpoint.method} ${endpoint.path(':id', ':userId')}`).to.equal(404);
      }
      const inItsOrg = await api(app, admin, otherOrg).get(`/api/teams/${foreign.id}`);
      expect(inItsOrg.status).to.equal(200);
      expect(inItsOrg.body).to.include({ id: foreign.id, orgId: otherOrg });
      expect(await app.count('teams', { id: foreign.id })).to.equal(1);
    });
  });

  describe('POST /api/teams', () => {
    it('creates the team in the active org: 201 with the team, the creator as its admin, audited', async () => {
      const res = await api(app, admin).post('/api/teams', { name: 'Platform', email: 'platform@example.test' });
      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys('teamId', ...TEAM_FIELDS);
      expect(res.body).to.include({ name: 'Platform', email: 'platform@example.test', orgId: 'org_main', memberCount: 1 });
      expect(res.body.teamId)
        .to.equal(res.body.id)
        .and.match(/^team_[0-9a-f]{16}$/);
      expect(res.body.avatarUrl).to.match(/^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}/);
      const team = { id: res.body.id as string, name: 'Platform', orgId: 'org_main' };
      expect(await app.db('teams').where('id', team.id).first('org_id', 'name', 'email')).to.deep.equal({
        org_id: 'org_main',
        name: 'Platform',
        email: 'platform@example.test',
      });
      expect(await memberRow(team, admin.id)).to.include({ permission: 4 });
      expect(await teamAdminActions(app, admin.id, team)).to.deep.equal(ADMIN_ACTIONS);
      await expectAudited('team.created', team, admin);
      await expectAudited('team.member_added', team, admin, { userId: admin.id, login: admin.login, permission: 4 });
    });

    it('lets a holder of teams:create alone administer the team it created (and only that one)', async () => {
      const creator = await createUser(app, { role: 'Viewer' });
      const other = await buildTeam(app);
      await assignRole(app, 'org_main', creator.id, 'fixed:teams:creator');
      const res = await api(app, creator).post('/api/teams', { name: 'Creator Crew' });
      expect(res.status).to.equal(201);
      expect((await api(app, creator).put(`/api/teams/${res.body.id}`, { name: 'Creator Crew 2' })).status).to.equal(200);
      expect((await api(app, creator).put(`/api/teams/${other.id}`, { name: 'Hijacked' })).status).to.equal(403);
    });

    it('answers 409 for a name the org already has; another org may use it', async () => {
      const existing = await buildTeam(app, { name: 'Duplicated' });
      const teamsBefore = await app.count('teams');
      const res = await api(app, admin).post('/api/teams', { name: 'Duplicated' });
      expect(res.status).to.equal(409);
      expect(res.body.message).to.equal('a team named Duplicated already exists in this org');
      expect((await api(app, admin).post('/api/teams', { name: '  Duplicated ' })).status).to.equal(409);
      expect(await app.count('teams')).to.equal(teamsBefore);
      expect(await auditEntries(app, { action: 'team.created', target_id: existing.id })).to.have.length(0);

      const elsewhere = await api(app, admin, otherOrg).post('/api/teams', { name: 'Duplicated' });
      expect(elsewhere.status).to.equal(201);
      expect(elsewhere.body.orgId).to.equal(otherOrg);
    });

    it('rejects bad input with 400 and creates nothing', async () => {
      const teamsBefore = await app.count('teams');
      const cases: unknown[] = [
        {},
        { email: 'a@b.test' },
        { name: 42 },
        { name: '' },
        { name: '   ' },
        { name: 'ok', email: 'not an email' },
        { name: 'ok', email: 7 },
        { name: 'ok', extra: true },
        { name: 'x'.repeat(191) },
      ];
      for (const body of cases) {
        const res = await api(app, admin).post('/api/teams', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string').and.not.empty;
      }
      const noBody = await app.request('POST', '/api/teams', { cookie: admin.cookie });
      expect(noBody.status).to.equal(400);
      expect(await app.count('teams')).to.equal(teamsBefore);
    });
  });

  describe('GET /api/teams/:id', () => {
    it('shows the team to a Viewer', async () => {
      const team = await buildTeam(app, { name: 'Readable', email: 'readable@example.test' });
      await addTeamMember(app, team, admin.id);
      const res = await api(app, viewer).get(`/api/teams/${team.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...TEAM_FIELDS);
      expect(res.body).to.include({ id: team.id, orgId: 'org_main', name: 'Readable', email: 'readable@example.test', memberCount: 1 });
    });

    it('rejects an over-long id with 400', async () => {
      expect((await api(app, admin).get(`/api/teams/${'x'.repeat(41)}`)).status).to.equal(400);
    });
  });

  describe('PUT /api/teams/:id', () => {
    it('renames and re-addresses the team: 200 with the team, audited with the changed fields', async () => {
      const team = await buildTeam(app, { name: 'Old Name' });
      const res = await api(app, admin).put(`/api/teams/${team.id}`, { name: 'New Name', email: 'new@example.test' });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...TEAM_FIELDS);
      expect(res.body).to.include({ id: team.id, name: 'New Name', email: 'new@example.test', memberCount: 0 });
      expect(await app.db('teams').where('id', team.id).first('name', 'email')).to.deep.equal({ name: 'New Name', email: 'new@example.test' });
      await expectAudited('team.updated', { id: team.id, name: 'New Name' }, admin, { fields: ['email', 'name'], previousName: 'Old Name' });

      app.clock.advance(1000); // entries of the same millisecond have no order
      const emailOnly = await api(app, admin).put(`/api/teams/${team.id}`, { email: '' });
      expect(emailOnly.body).to.include({ name: 'New Name', email: '' });
      await expectAudited('team.updated', { id: team.id, name: 'New Name' }, admin, { fields: ['email'] });

      const unchanged = await api(app, admin).put(`/api/teams/${team.id}`, { name: 'New Name' });
      expect(unchanged.status).to.equal(200);
      expect(await auditEntries(app, { action: 'team.updated', target_id: team.id })).to.have.length(2);
    });

    it('answers 409 when another team of the org has the name', async () => {
      await buildTeam(app, { name: 'Taken Name' });
      const team = await buildTeam(app, { name: 'Free Name' });
      const res = await api(app, admin).put(`/api/teams/${team.id}`, { name: 'Taken Name' });
      expect(res.status).to.equal(409);
      expect(await app.db('teams').where('id', team.id).first('name')).to.deep.equal({ name: 'Free Name' });
    });

    it('rejects bad input with 400', async () => {
      const team = await buildTeam(app, { name: 'Stable' });
      for (const body of [{}, { name: 5 }, { name: '' }, { name: ' ' }, { email: 'nope' }, { id: 'team_other' }]) {
        const res = await api(app, admin).put(`/api/teams/${team.id}`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect(await app.db('teams').where('id', team.id).first('name')).to.deep.equal({ name: 'Stable' });
    });
  });

  describe('DELETE /api/teams/:id', () => {
    it('deletes the team with its members, roles, managed role, admin rights and preferences, audited', async () => {
      const team = await buildTeam(app, { name: 'Doomed' });
      const teamAdmin = await createUser(app, { role: 'Viewer' });
      const member = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, teamAdmin.id, 4);
      await addTeamMember(app, team, member.id);
      await assignRoleToTeam(app, team, 'fixed:org.users:reader');
      await grantManagedPermissions(app, 'org_main', { kind: 'team', teamId: team.id }, [{ action: 'dashboards:read', scope: 'dashboards:uid:d1' }]);
      expect((await api(app, admin).post('/api/folders', { uid: 'f1', title: 'F1' })).status).to.equal(201);
      await importLegacyAclEntries(app, 'org_main', [{ folderUid: 'f1', teamId: team.id, permission: 1 }]);
      expect((await api(app, admin).put(`/api/teams/${team.id}/preferences`, { theme: 'light' })).status).to.equal(200);
      expect((await permissionsOf(app, member))['org.users:read']).to.deep.equal(['users:*']);
      expect((await permissionsOf(app, teamAdmin))['teams:write']).to.deep.equal([`teams:id:${team.id}`]);

      const res = await api(app, admin).delete(`/api/teams/${team.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'team deleted' });
      expect(await app.count('teams', { id: team.id })).to.equal(0);
      expect(await app.count('team_members', { team_id: team.id })).to.equal(0);
      expect(await app.count('team_roles', { team_id: team.id })).to.equal(0);
      expect(await app.count('roles', { uid: `managed:teams:${team.id}:permissions` })).to.equal(0);
      expect(await app.count('role_permissions', { scope: `teams:id:${team.id}` })).to.equal(0);
      expect(await app.count('preferences', { owner_kind: 'team', owner_id: team.id })).to.equal(0);
      expect(await app.count('legacy_acl', { team_id: team.id })).to.equal(0);
      await expectAudited('team.deleted', team, admin, { memberIds: [teamAdmin.id, member.id].sort() });
      // the next authorize sees it: the team's role and the admin's rights are gone
      expect(await permissionsOf(app, member)).to.not.have.property('org.users:read');
      expect(await permissionsOf(app, teamAdmin)).to.not.have.property('teams:write');
      expect((await api(app, teamAdmin).get(`/api/teams/${team.id}/members`)).status).to.equal(404);
    });

    it('is 403 for the team admin: deleting is not a team-admin right', async () => {
      const team = await buildTeam(app);
      const teamAdmin = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, teamAdmin.id, 4);
      const res = await api(app, teamAdmin).delete(`/api/teams/${team.id}`);
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('permission denied: you need teams:delete to do this');
      expect(await app.count('teams', { id: team.id })).to.equal(1);
    });
  });
});
