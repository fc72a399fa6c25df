import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  addTeamMember,
  assignRoleToTeam,
  buildManyTeams,
  buildTeam,
  createOrg,
  createUser,
  DENIED,
  type TestTeam,
  type TestUser,
} from './helpers/factories.ts';

const TEAM_FIELDS = ['id', 'orgId', 'name', 'email', 'avatarUrl', 'memberCount'];
const MEMBER_FIELDS = ['orgId', 'teamId', 'userId', 'login', 'email', 'name', 'permission', 'avatarUrl'];
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

  const as = (user: TestUser, headers: Record<string, string> = {}) => ({
    get: (path: string) => app.request('GET', path, { cookie: user.cookie, headers }),
    post: (path: string, body?: unknown) => app.request('POST', path, { cookie: user.cookie, body, headers }),
    put: (path: string, body?: unknown) => app.request('PUT', path, { cookie: user.cookie, body, headers }),
    delete: (path: string) => app.request('DELETE', path, { cookie: user.cookie, headers }),
  });

  async function audits(action: string, teamId: string) {
    const rows = await app.db('audit_log').where({ action, target_id: teamId }).orderBy(['timestamp', 'id']).select('*');
    return rows.map((row: Record<string, any>) => ({ ...row, metadata: row.metadata ? JSON.parse(row.metadata) : null }));
  }

  async function expectAudited(action: string, team: { id: string; name: string }, actor: TestUser, metadata?: Record<string, unknown>) {
    const entries = await audits(action, team.id);
    expect(entries, `${action} entries`).to.have.length.greaterThan(0);
    const last = entries[entries.length - 1]!;
    expect(last).to.include({ actor_type: 'user', actor_id: actor.id, org_id: 'org_main', target_type: 'team', target_name: team.name, outcome: 'success' });
    if (metadata) expect(last.metadata).to.deep.equal(metadata);
  }

  /** The caller's permissions in the active org, as GET /api/user/permissions shows them. */
  async function permissionsOf(user: TestUser): Promise<Record<string, string[]>> {
    const res = await as(user).get('/api/user/permissions');
    expect(res.status).to.equal(200);
    return res.body;
  }

  const memberRow = (team: TestTeam, userId: string) => app.db('team_members').where({ team_id: team.id, user_id: userId }).first();

  /** The team-admin permissions the user's managed role holds on the team. */
  async function adminPermissions(userId: string, team: TestTeam): Promise<string[]> {
    const rows: Array<{ action: string }> = await app
      .db('role_permissions as p')
      .join('roles as r', 'r.id', 'p.role_id')
      .where({ 'r.org_id': team.orgId, 'r.uid': `managed:users:${userId}:permissions`, 'p.scope': `teams:id:${team.id}` })
      .orderBy('p.action')
      .select('p.action');
    return rows.map((row) => row.action);
  }

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
      const inItsOrg = await as(admin, { 'X-Svc-Org-Id': otherOrg }).get(`/api/teams/${foreign.id}`);
      expect(inItsOrg.status).to.equal(200);
      expect(inItsOrg.body).to.include({ id: foreign.id, orgId: otherOrg });
      expect(await app.count('teams', { id: foreign.id })).to.equal(1);
    });
  });

  describe('POST /api/teams', () => {
    it('creates the team in the active org: 201 with the team, the creator as its admin, audited', async () => {
      const res = await as(admin).post('/api/teams', { name: 'Platform', email: 'platform@example.test' });
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
      expect(await adminPermissions(admin.id, team)).to.deep.equal(ADMIN_ACTIONS);
      await expectAudited('team.created', team, admin);
      await expectAudited('team.member_added', team, admin, { userId: admin.id, login: admin.login, permission: 4 });
    });

    it('lets a holder of teams:create alone administer the team it created (and only that one)', async () => {
      const creator = await createUser(app, { role: 'Viewer' });
      const other = await buildTeam(app);
      await app.services.transact(async (tx) => {
        const role: { id: number } = await tx.db('roles').where({ org_id: 'org_main', uid: 'fixed:teams:creator' }).first('id');
        await tx.db('user_roles').insert({ user_id: creator.id, role_id: role.id, org_id: 'org_main', created_at: app.clock.now() });
        tx.policyChanged('org_main', { kind: 'member', userId: creator.id });
      });
      const res = await as(creator).post('/api/teams', { name: 'Creator Crew' });
      expect(res.status).to.equal(201);
      expect((await as(creator).put(`/api/teams/${res.body.id}`, { name: 'Creator Crew 2' })).status).to.equal(200);
      expect((await as(creator).put(`/api/teams/${other.id}`, { name: 'Hijacked' })).status).to.equal(403);
    });

    it('answers 409 for a name the org already has; another org may use it', async () => {
      const existing = await buildTeam(app, { name: 'Duplicated' });
      const teamsBefore = await app.count('teams');
      const res = await as(admin).post('/api/teams', { name: 'Duplicated' });
      expect(res.status).to.equal(409);
      expect(res.body.message).to.equal('a team named Duplicated already exists in this org');
      expect((await as(admin).post('/api/teams', { name: '  Duplicated ' })).status).to.equal(409);
      expect(await app.count('teams')).to.equal(teamsBefore);
      expect(await audits('team.created', existing.id)).to.have.length(0);

      const elsewhere = await as(admin, { 'X-Svc-Org-Id': otherOrg }).post('/api/teams', { name: 'Duplicated' });
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
        const res = await as(admin).post('/api/teams', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string').and.not.empty;
      }
      const noBody = await app.request('POST', '/api/teams', { cookie: admin.cookie });
      expect(noBody.status).to.equal(400);
      expect(await app.count('teams')).to.equal(teamsBefore);
    });
  });

  describe('GET /api/teams/search', () => {
    let org: string;
    let orgAdmin: TestUser;
    let orgViewer: TestUser;
    let lonelyAdmin: TestUser;
    let teams: TestTeam[];

    before(async () => {
      org = await createOrg(app, { name: 'Search Org' });
      orgAdmin = await createUser(app, { orgId: org, role: 'Admin' });
      orgViewer = await createUser(app, { orgId: org, role: 'Viewer' });
      lonelyAdmin = await createUser(app, { orgId: org, role: 'None' });
      teams = [];
      for (const name of ['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo 100%']) teams.push(await buildTeam(app, { orgId: org, name }));
      await addTeamMember(app, teams[2]!, lonelyAdmin.id, 4);
      await addTeamMember(app, teams[2]!, orgViewer.id);
    });

    const search = (user: TestUser, query = '') => as(user, { 'X-Svc-Org-Id': org }).get(`/api/teams/search${query}`);

    it('lists every team of the org, by name, for a Viewer and for an Admin', async () => {
      for (const user of [orgViewer, orgAdmin]) {
        const res = await search(user);
        expect(res.status).to.equal(200);
        expect(res.body).to.have.all.keys('totalCount', 'teams', 'page', 'perPage');
        expect(res.body).to.include({ totalCount: 5, page: 1, perPage: 100 });
        expect(res.body.teams.map((t: { name: string }) => t.name)).to.deep.equal(['Alpha', 'Bravo', 'Charlie', 'Delta', 'Echo 100%']);
        for (const team of res.body.teams) expect(team).to.have.all.keys(...TEAM_FIELDS);
        expect(res.body.teams[2]).to.include({ id: teams[2]!.id, orgId: org, memberCount: 2 });
      }
    });

    it('shows a member without teams:read only the team it administers, and counts only that', async () => {
      const res = await search(lonelyAdmin, '?perpage=1');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ totalCount: 1, page: 1, perPage: 1 });
      expect(res.body.teams.map((t: { id: string }) => t.id)).to.deep.equal([teams[2]!.id]);
      expect((await search(lonelyAdmin, '?query=alpha')).body).to.include({ totalCount: 0 });
    });

    it('is 403 for a member with org role None and no team', async () => {
      const nobody = await createUser(app, { orgId: org, role: 'None' });
      const res = await search(nobody);
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('permission denied: you need teams:read to do this');
    });

    it('pages after filtering, and matches query on the name ignoring case, % literal', async () => {
      const second = await search(orgAdmin, '?perpage=2&page=2');
      expect(second.body).to.include({ totalCount: 5, page: 2, perPage: 2 });
      expect(second.body.teams.map((t: { name: string }) => t.name)).to.deep.equal(['Charlie', 'Delta']);
      const beyond = await search(orgAdmin, '?perpage=2&page=9');
      expect(beyond.body).to.include({ totalCount: 5 });
      expect(beyond.body.teams).to.deep.equal([]);
      const names = async (query: string) => (await search(orgAdmin, `?query=${encodeURIComponent(query)}`)).body.teams.map((t: { name: string }) => t.name);
      expect(await names('LTA')).to.deep.equal(['Delta']);
      expect(await names('a')).to.deep.equal(['Alpha', 'Bravo', 'Charlie', 'Delta']);
      expect(await names('%')).to.deep.equal(['Echo 100%']);
      expect(await names('_')).to.deep.equal([]);
    });

    it('rejects bad paging and unknown parameters with 400', async () => {
      for (const query of ['perpage=0', 'perpage=1001', 'page=0', 'page=abc', 'sort=name']) {
        const res = await search(orgAdmin, `?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await app.request('GET', `/api/teams/search?orgId=${org}`, { cookie: orgAdmin.cookie })).status).to.equal(200);
    });

    it('filters thousands of teams in one policy call', async () => {
      const bulkOrg = await createOrg(app, { name: 'Bulk Teams Org' });
      const bulkAdmin = await createUser(app, { orgId: bulkOrg, role: 'Admin' });
      const teamAdmin = await createUser(app, { orgId: bulkOrg, role: 'None' });
      const ids = await buildManyTeams(app, bulkOrg, 3000, 'bulk');
      await addTeamMember(app, { id: ids[2500]!, name: 'bulk 02500', orgId: bulkOrg }, teamAdmin.id, 4);
      const engine = app.services.engine;
      const original = engine.filter.bind(engine);
      let calls = 0;
      engine.filter = async (input) => {
        calls++;
        return original(input);
      };
      try {
        const page = await as(bulkAdmin, { 'X-Svc-Org-Id': bulkOrg }).get('/api/teams/search?perpage=10&page=300');
        expect(page.body).to.include({ totalCount: 3000 });
        expect(page.body.teams.map((t: { id: string }) => t.id)).to.deep.equal(ids.slice(2990));
        const own = await as(teamAdmin, { 'X-Svc-Org-Id': bulkOrg }).get('/api/teams/search');
        expect(own.body).to.include({ totalCount: 1 });
        expect(own.body.teams[0]).to.include({ id: ids[2500], memberCount: 1 });
        expect(calls).to.equal(2);
      } finally {
        engine.filter = original;
      }
    });
  });

  describe('GET /api/teams/:id', () => {
    it('shows the team to a Viewer', async () => {
      const team = await buildTeam(app, { name: 'Readable', email: 'readable@example.test' });
      await addTeamMember(app, team, admin.id);
      const res = await as(viewer).get(`/api/teams/${team.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...TEAM_FIELDS);
      expect(res.body).to.include({ id: team.id, orgId: 'org_main', name: 'Readable', email: 'readable@example.test', memberCount: 1 });
    });

    it('rejects an over-long id with 400', async () => {
      expect((await as(admin).get(`/api/teams/${'x'.repeat(41)}`)).status).to.equal(400);
    });
  });

  describe('PUT /api/teams/:id', () => {
    it('renames and re-addresses the team: 200 with the team, audited with the changed fields', async () => {
      const team = await buildTeam(app, { name: 'Old Name' });
      const res = await as(admin).put(`/api/teams/${team.id}`, { name: 'New Name', email: 'new@example.test' });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...TEAM_FIELDS);
      expect(res.body).to.include({ id: team.id, name: 'New Name', email: 'new@example.test', memberCount: 0 });
      expect(await app.db('teams').where('id', team.id).first('name', 'email')).to.deep.equal({ name: 'New Name', email: 'new@example.test' });
      await expectAudited('team.updated', { id: team.id, name: 'New Name' }, admin, { fields: ['email', 'name'], previousName: 'Old Name' });

      app.clock.advance(1000); // entries of the same millisecond have no order
      const emailOnly = await as(admin).put(`/api/teams/${team.id}`, { email: '' });
      expect(emailOnly.body).to.include({ name: 'New Name', email: '' });
      await expectAudited('team.updated', { id: team.id, name: 'New Name' }, admin, { fields: ['email'] });

      const unchanged = await as(admin).put(`/api/teams/${team.id}`, { name: 'New Name' });
      expect(unchanged.status).to.equal(200);
      expect(await audits('team.updated', team.id)).to.have.length(2);
    });

    it('answers 409 when another team of the org has the name', async () => {
      await buildTeam(app, { name: 'Taken Name' });
      const team = await buildTeam(app, { name: 'Free Name' });
      const res = await as(admin).put(`/api/teams/${team.id}`, { name: 'Taken Name' });
      expect(res.status).to.equal(409);
      expect(await app.db('teams').where('id', team.id).first('name')).to.deep.equal({ name: 'Free Name' });
    });

    it('rejects bad input with 400', async () => {
      const team = await buildTeam(app, { name: 'Stable' });
      for (const body of [{}, { name: 5 }, { name: '' }, { name: ' ' }, { email: 'nope' }, { id: 'team_other' }]) {
        const res = await as(admin).put(`/api/teams/${team.id}`, body);
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
      await app.services.transact(async (tx) => {
        const [roleId] = await tx.db('roles').insert({
          uid: `managed:teams:${team.id}:permissions`,
          org_id: 'org_main',
          name: `managed:teams:${team.id}:permissions`,
          hidden: true,
          created_at: 0,
          updated_at: 0,
        });
        await tx.db('role_permissions').insert({ role_id: Number(roleId), action: 'dashboards:read', scope: 'dashboards:uid:d1' });
        await tx.db('team_roles').insert({ team_id: team.id, role_id: Number(roleId), created_at: 0 });
        await tx.db('legacy_acl').insert({ org_id: 'org_main', folder_uid: 'f1', team_id: team.id, permission: 1 });
        tx.policyChanged('org_main');
      });
      expect((await as(admin).put(`/api/teams/${team.id}/preferences`, { theme: 'light' })).status).to.equal(200);
      expect((await permissionsOf(member))['org.users:read']).to.deep.equal(['users:*']);
      expect((await permissionsOf(teamAdmin))['teams:write']).to.deep.equal([`teams:id:${team.id}`]);

      const res = await as(admin).delete(`/api/teams/${team.id}`);
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
      expect(await permissionsOf(member)).to.not.have.property('org.users:read');
      expect(await permissionsOf(teamAdmin)).to.not.have.property('teams:write');
      expect((await as(teamAdmin).get(`/api/teams/${team.id}/members`)).status).to.equal(404);
    });

    it('is 403 for the team admin: deleting is not a team-admin right', async () => {
      const team = await buildTeam(app);
      const teamAdmin = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, teamAdmin.id, 4);
      const res = await as(teamAdmin).delete(`/api/teams/${team.id}`);
      expect(res.status).to.equal(403);
      expect(res.body.message).to.equal('permission denied: you need teams:delete to do this');
      expect(await app.count('teams', { id: team.id })).to.equal(1);
    });
  });

  describe('team members', () => {
    it('GET lists the members with their permission, by login', async () => {
      const team = await buildTeam(app);
      const first = await createUser(app, { login: 'aaa-member', name: 'Ann' });
      const second = await createUser(app, { login: 'bbb-member' });
      await addTeamMember(app, team, second.id, 4);
      await addTeamMember(app, team, first.id);
      const res = await as(viewer).get(`/api/teams/${team.id}/members`);
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
      expect((await as(viewer).get(`/api/teams/${(await buildTeam(app)).id}/members`)).body).to.deep.equal({
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
      expect(await permissionsOf(user)).to.not.have.property('org.users:read');

      const res = await as(admin).post(`/api/teams/${team.id}/members`, { userId: user.id });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...MEMBER_FIELDS);
      expect(res.body).to.include({ teamId: team.id, userId: user.id, login: user.login, permission: 0 });
      expect(await memberRow(team, user.id)).to.include({ permission: 0 });
      await expectAudited('team.member_added', team, admin, { userId: user.id, login: user.login, permission: 0 });
      expect((await permissionsOf(user))['org.users:read']).to.deep.equal(['users:*']);
      expect((await as(admin).get(`/api/teams/${team.id}`)).body.memberCount).to.equal(1);

      const again = await as(admin).post(`/api/teams/${team.id}/members`, { userId: user.id });
      expect(again.status).to.equal(409);
      expect(await app.count('team_members', { team_id: team.id })).to.equal(1);
    });

    it('POST answers 400 for a user outside the org, an unknown user, a service account, or a bad body', async () => {
      const team = await buildTeam(app);
      const foreigner = await createUser(app, { orgId: otherOrg });
      const sa = await createUser(app, { login: `sa-team-${Date.now().toString(36)}` });
      await app.db('users').where('id', sa.id).update({ is_service_account: true });
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
        const res = await as(admin).post(`/api/teams/${team.id}/members`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await as(admin).post(`/api/teams/${team.id}/members`, { userId: foreigner.id })).body.message).to.equal(
        `user ${foreigner.id} is not a member of this org`,
      );
      expect(await app.count('team_members', { team_id: team.id })).to.equal(0);
    });

    it('PUT makes a member Admin (4) and back: the managed role carries the rights, audited both ways', async () => {
      const team = await buildTeam(app);
      const user = await createUser(app, { role: 'Viewer' });
      await addTeamMember(app, team, user.id);

      const promoted = await as(admin).put(`/api/teams/${team.id}/members/${user.id}`, { permission: 4 });
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
      expect(await adminPermissions(user.id, team)).to.deep.equal(ADMIN_ACTIONS);
      await expectAudited('team.member_updated', team, admin, { userId: user.id, login: user.login, permission: 4, previousPermission: 0 });
      const granted = await permissionsOf(user);
      expect(granted['teams:write']).to.deep.equal([`teams:id:${team.id}`]);
      expect(granted['team.permissions:write']).to.deep.equal([`teams:id:${team.id}`]);

      const demoted = await as(admin).put(`/api/teams/${team.id}/members/${user.id}`, { permission: 0 });
      expect(demoted.status).to.equal(200);
      expect(demoted.body).to.include({ permission: 0 });
      expect(await adminPermissions(user.id, team)).to.deep.equal([]);
      await expectAudited('team.member_updated', team, admin, { userId: user.id, login: user.login, permission: 0, previousPermission: 4 });
      expect(await permissionsOf(user)).to.not.have.property('teams:write');

      const same = await as(admin).put(`/api/teams/${team.id}/members/${user.id}`, { permission: 0 });
      expect(same.status).to.equal(200);
      expect(await audits('team.member_updated', team.id)).to.have.length(2);
    });

    it('PUT answers 404 for a user who is not in the team and 400 for a bad permission', async () => {
      const team = await buildTeam(app);
      await addTeamMember(app, team, viewer.id);
      const stranger = await createUser(app);
      const missing = await as(admin).put(`/api/teams/${team.id}/members/${stranger.id}`, { permission: 4 });
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.equal(`user ${stranger.id} is not a member of team ${team.id}`);
      for (const body of [{}, { permission: 2 }, { permission: 1 }, { permission: '4' }, { permission: 4, extra: 1 }]) {
        const res = await as(admin).put(`/api/teams/${team.id}/members/${viewer.id}`, body);
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
      expect((await permissionsOf(user))['org.users:read']).to.deep.equal(['users:*']);

      const res = await as(admin).delete(`/api/teams/${team.id}/members/${user.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'team member removed' });
      expect(await memberRow(team, user.id)).to.equal(undefined);
      expect(await adminPermissions(user.id, team)).to.deep.equal([]);
      await expectAudited('team.member_removed', team, admin, { userId: user.id, login: user.login });
      const after = await permissionsOf(user);
      expect(after).to.not.have.property('org.users:read');
      expect(after).to.not.have.property('teams:write');

      const again = await as(admin).delete(`/api/teams/${team.id}/members/${user.id}`);
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
      expect((await as(lead).post(`/api/teams/${own.id}/members`, { userId: recruit.id })).status).to.equal(403);

      expect((await as(admin).put(`/api/teams/${own.id}/members/${lead.id}`, { permission: 4 })).status).to.equal(200);
      const added = await as(lead).post(`/api/teams/${own.id}/members`, { userId: recruit.id });
      expect(added.status).to.equal(200);
      await expectAudited('team.member_added', own, lead, { userId: recruit.id, login: recruit.login, permission: 0 });
      const renamed = await as(lead).put(`/api/teams/${own.id}`, { name: 'Own Team Renamed' });
      expect(renamed.status).to.equal(200);
      expect(renamed.body.name).to.equal('Own Team Renamed');
      expect((await as(lead).put(`/api/teams/${own.id}/preferences`, { timezone: 'utc' })).status).to.equal(200);
      expect((await as(lead).put(`/api/teams/${own.id}/members/${recruit.id}`, { permission: 4 })).status).to.equal(200);
      expect((await as(lead).delete(`/api/teams/${own.id}/members/${recruit.id}`)).status).to.equal(200);

      expect((await as(lead).post(`/api/teams/${other.id}/members`, { userId: second.id })).status).to.equal(403);
      expect((await as(lead).put(`/api/teams/${other.id}`, { name: 'Taken Over' })).status).to.equal(403);
      expect((await as(lead).put(`/api/teams/${other.id}/preferences`, { timezone: 'utc' })).status).to.equal(403);
      expect((await as(lead).post('/api/teams', { name: 'Lead Made' })).status).to.equal(403);
      expect(await app.count('team_members', { team_id: other.id })).to.equal(0);

      expect((await as(admin).put(`/api/teams/${own.id}/members/${lead.id}`, { permission: 0 })).status).to.equal(200);
      const after = await as(lead).post(`/api/teams/${own.id}/members`, { userId: second.id });
      expect(after.status).to.equal(403);
      expect((await as(lead).put(`/api/teams/${own.id}`, { name: 'Again' })).status).to.equal(403);
      expect(await app.db('teams').where('id', own.id).first('name')).to.deep.equal({ name: 'Own Team Renamed' });
    });

    it('admin rights are per org: the managed role of the team org carries them', async () => {
      const foreign = await buildTeam(app, { orgId: otherOrg });
      const user = await createUser(app, { role: 'Viewer' });
      await addMember(app, otherOrg, user.id, 'None');
      await addTeamMember(app, foreign, user.id, 4);
      expect(await app.count('roles', { org_id: 'org_main', uid: `managed:users:${user.id}:permissions` })).to.equal(0);
      expect((await permissionsOf(user))['teams:write']).to.equal(undefined);
      const res = await as(user, { 'X-Svc-Org-Id': otherOrg }).put(`/api/teams/${foreign.id}`, { email: 'x@example.test' });
      expect(res.status).to.equal(200);
    });
  });

  describe('team preferences', () => {
    it('GET shows defaults, PUT replaces all three (owner_kind team), audited', async () => {
      const team = await buildTeam(app);
      const empty = await as(viewer).get(`/api/teams/${team.id}/preferences`);
      expect(empty.status).to.equal(200);
      expect(empty.body).to.deep.equal({ homeDashboardUid: '', timezone: '', theme: '' });

      const saved = await as(admin).put(`/api/teams/${team.id}/preferences`, { homeDashboardUid: 'home1', timezone: 'Europe/Paris', theme: 'dark' });
      expect(saved.status).to.equal(200);
      expect(saved.body).to.deep.equal({ homeDashboardUid: 'home1', timezone: 'Europe/Paris', theme: 'dark' });
      expect(await app.db('preferences').where({ owner_kind: 'team', owner_id: team.id }).first('home_dashboard_uid', 'timezone', 'theme')).to.deep.equal({
        home_dashboard_uid: 'home1',
        timezone: 'Europe/Paris',
        theme: 'dark',
      });
      await expectAudited('team.preferences_updated', team, admin, { fields: ['homeDashboardUid', 'theme', 'timezone'] });
      expect((await as(viewer).get(`/api/teams/${team.id}/preferences`)).body).to.deep.equal({
        homeDashboardUid: 'home1',
        timezone: 'Europe/Paris',
        theme: 'dark',
      });

      const partial = await as(admin).put(`/api/teams/${team.id}/preferences`, { theme: 'light' });
      expect(partial.body).to.deep.equal({ homeDashboardUid: '', timezone: '', theme: 'light' });
    });

    it('PUT rejects bad input with 400', async () => {
      const team = await buildTeam(app);
      for (const body of [{ theme: 'blue' }, { timezone: 5 }, { homeDashboardUid: 'x'.repeat(41) }, { colour: 'red' }]) {
        const res = await as(admin).put(`/api/teams/${team.id}/preferences`, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
      }
      expect(await app.count('preferences', { owner_kind: 'team', owner_id: team.id })).to.equal(0);
    });
  });
});
