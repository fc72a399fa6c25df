/** Teams: searching the teams of an org (`GET /api/teams/search`), filtered by the policy. */
import { expect } from 'chai';
import { createTestDatabase, startTestApp, statementsDuring, type TestApp } from './helpers/app.ts';
import { addTeamMember, api, buildManyTeams, buildTeam, createOrg, createUser, type TestTeam, type TestUser } from './helpers/factories.ts';

const TEAM_FIELDS = ['id', 'orgId', 'name', 'email', 'avatarUrl', 'memberCount'];

describe('teams', () => {
  let app: TestApp;

  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
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

    const search = (user: TestUser, query = '') => api(app, user, org).get(`/api/teams/search${query}`);

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

    it('shows the next request every change to the list it keeps: a team created, renamed, deleted, a member added and removed, a member deleted', async () => {
      const keptOrg = await createOrg(app, { name: 'Kept Teams Org' });
      const admin = await createUser(app, { orgId: keptOrg, role: 'Admin' });
      const member = await createUser(app, { orgId: keptOrg, role: 'Viewer' });
      const as = api(app, admin, keptOrg);
      const listed = async () => {
        const res = await as.get('/api/teams/search');
        expect(res.status).to.equal(200);
        return res.body.teams.map((t: { name: string; memberCount: number }) => `${t.name}:${t.memberCount}`);
      };
      expect(await listed()).to.deep.equal([]);
      // the admin who creates a team is its first member
      const created = await as.post('/api/teams', { name: 'Ops' });
      expect(created.status).to.equal(201);
      const teamId = created.body.teamId as string;
      expect(await listed()).to.deep.equal(['Ops:1']);
      expect((await as.put(`/api/teams/${teamId}`, { name: 'Operations' })).status).to.equal(200);
      expect(await listed()).to.deep.equal(['Operations:1']);
      expect((await as.post(`/api/teams/${teamId}/members`, { userId: member.id })).status).to.equal(200);
      expect(await listed()).to.deep.equal(['Operations:2']);
      expect((await as.delete(`/api/teams/${teamId}/members/${member.id}`)).status).to.equal(200);
      expect(await listed()).to.deep.equal(['Operations:1']);
      expect((await as.post(`/api/teams/${teamId}/members`, { userId: member.id })).status).to.equal(200);
      expect(await listed()).to.deep.equal(['Operations:2']);
      expect((await app.request('DELETE', `/api/admin/users/${member.id}`, { cookie: (await createUser(app, { svcAdmin: true })).cookie })).status).to.equal(
        200,
      );
      expect(await listed()).to.deep.equal(['Operations:1']);
      expect((await as.delete(`/api/teams/${teamId}`)).status).to.equal(200);
      expect(await listed()).to.deep.equal([]);
    });

    it('reads no SQL for a warm list without a search, and reads the teams again for a search', async () => {
      await search(orgAdmin);
      const readsTeams = (statements: string[]) => statements.filter((sql) => /^select/i.test(sql) && /from [`"]?teams[`"]?/i.test(sql));
      const warm = await statementsDuring(app, () => search(orgAdmin));
      expect(readsTeams(warm)).to.deep.equal([]);
      const searched = await statementsDuring(app, () => search(orgAdmin, '?query=alp'));
      expect(readsTeams(searched)).to.have.length(1);
    });

    it('shows a team another instance created within PRINCIPAL_CACHE_TTL_MS', async () => {
      const database = await createTestDatabase();
      const first = await startTestApp({ database, env: { PRINCIPAL_CACHE_TTL_MS: '1000' } });
      const second = await startTestApp({ database, clock: first.clock, env: { PRINCIPAL_CACHE_TTL_MS: '1000' } });
      try {
        const sharedOrg = await createOrg(first, { name: 'Shared Teams Org' });
        const admin = await createUser(first, { orgId: sharedOrg, role: 'Admin' });
        const names = async () => (await api(first, admin, sharedOrg).get('/api/teams/search')).body.teams.map((t: { name: string }) => t.name);
        expect(await names()).to.deep.equal([]);
        expect((await api(second, admin, sharedOrg).post('/api/teams', { name: 'Elsewhere' })).status).to.equal(201);
        first.clock.advance(1000);
        expect(await names()).to.deep.equal(['Elsewhere']);
      } finally {
        await second.close();
        await first.close();
        await database.drop();
      }
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
        const page = await api(app, bulkAdmin, bulkOrg).get('/api/teams/search?perpage=10&page=300');
        expect(page.body).to.include({ totalCount: 3000 });
        expect(page.body.teams.map((t: { id: string }) => t.id)).to.deep.equal(ids.slice(2990));
        const own = await api(app, teamAdmin, bulkOrg).get('/api/teams/search');
        expect(own.body).to.include({ totalCount: 1 });
        expect(own.body.teams[0]).to.include({ id: ids[2500], memberCount: 1 });
        expect(calls).to.equal(2);
      } finally {
        engine.filter = original;
      }
    });
  });
});
