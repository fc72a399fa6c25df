import { expect } from 'chai';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addTeamMember,
  api,
  buildAuthLink,
  buildServiceAccount,
  buildTeam,
  buildToken,
  createOrg,
  createUser,
  sessionCookie,
  type TestUser,
} from './helpers/factories.ts';

/**
 * The spec's list convention on every list endpoint: `perpage` and `page` (from 1) are honoured
 * and the answer is `{totalCount, <items>, page, perPage}`.
 */
describe('lists: perpage, page and totalCount on every list endpoint', () => {
  let app: TestApp;
  let orgId: string;
  let admin: TestUser;
  let serverAdmin: TestUser;
  /** total: what the fixtures make; undefined where the list holds what the whole app has (roles, users…). */
  const lists: Array<{ path: () => string; key: string; total?: number; id: string; as: () => TestUser }> = [];

  before(async () => {
    app = await startTestApp();
    orgId = await createOrg(app);
    admin = await createUser(app, { orgId, role: 'Admin' });
    serverAdmin = await createUser(app, { orgId, role: 'Admin', svcAdmin: true });
    const people = [await createUser(app, { orgId }), await createUser(app, { orgId }), await createUser(app, { orgId })];
    const team = await buildTeam(app, { orgId });
    for (const person of people) await addTeamMember(app, team, person.id);
    const account = await buildServiceAccount(app, { orgId });
    for (let i = 0; i < 3; i += 1) await buildToken(app, account);
    for (const name of ['k1', 'k2', 'k3']) expect((await api(app, admin, orgId).post('/api/auth/keys', { name, role: 'Viewer' })).status).to.equal(201);
    for (const name of ['p1', 'p2', 'p3']) expect((await api(app, admin).post('/api/user/access-tokens', { name })).status).to.equal(201);
    for (let i = 0; i < 2; i += 1) await sessionCookie(app, admin.id);
    const now = app.clock.now();
    for (const n of [1, 2, 3]) await buildAuthLink(app, admin.id, { id: `lnk_${n}`, authId: `sub-${n}`, createdAt: now + n });

    lists.push(
      { path: () => '/api/org/users', key: 'orgUsers', total: 5, id: 'userId', as: () => admin },
      { path: () => `/api/orgs/${orgId}/users`, key: 'orgUsers', total: 5, id: 'userId', as: () => admin },
      { path: () => `/api/teams/${team.id}/members`, key: 'teamMembers', total: 3, id: 'userId', as: () => admin },
      { path: () => '/api/user/tokens', key: 'sessions', total: 3, id: 'id', as: () => admin },
      { path: () => `/api/admin/users/${admin.id}/auth-tokens`, key: 'sessions', total: 3, id: 'id', as: () => serverAdmin },
      { path: () => '/api/user/auth-tokens', key: 'authLinks', total: 3, id: 'id', as: () => admin },
      { path: () => '/api/user/access-tokens', key: 'tokens', total: 3, id: 'id', as: () => admin },
      { path: () => `/api/serviceaccounts/${account.id}/tokens`, key: 'tokens', total: 3, id: 'id', as: () => admin },
      { path: () => '/api/auth/keys', key: 'keys', total: 3, id: 'id', as: () => admin },
      // the lists that answered the envelope already
      { path: () => '/api/orgs', key: 'orgs', id: 'id', as: () => serverAdmin },
      { path: () => '/api/teams/search', key: 'teams', total: 1, id: 'id', as: () => admin },
      { path: () => '/api/serviceaccounts/search', key: 'serviceAccounts', total: 1, id: 'id', as: () => admin },
      { path: () => '/api/admin/users', key: 'users', id: 'id', as: () => serverAdmin },
      { path: () => '/api/access-control/roles?includeHidden=true', key: 'roles', id: 'uid', as: () => admin },
      { path: () => '/api/admin/audit-log', key: 'items', id: 'id', as: () => serverAdmin },
    );
  });
  after(async () => {
    await app.close();
  });

  const get = (user: TestUser, path: string) => api(app, user, orgId).get(path);
  const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

  it('each answers the envelope, pages through all its items once, and refuses bad paging with 400', async () => {
    for (const list of lists) {
      const path = list.path();
      const all = await get(list.as(), path);
      expect(all.status, path).to.equal(200);
      expect(all.body, path).to.have.all.keys('totalCount', list.key, 'page', 'perPage');
      const total = list.total ?? all.body.totalCount;
      expect(total, path).to.be.greaterThan(0);
      expect(all.body, path).to.include({ totalCount: total, page: 1, perPage: 100 });
      const ids = all.body[list.key].map((item: Record<string, string>) => item[list.id]);
      expect(ids, path).to.have.length(Math.min(total, 100));

      // three pages or so, whatever the length
      const perPage = Math.max(1, Math.ceil(Math.min(total, 100) / 3));
      const paged: string[] = [];
      for (let page = 1; paged.length < ids.length; page += 1) {
        const res = await get(list.as(), withQuery(path, `perpage=${perPage}&page=${page}`));
        expect(res.status, `${path} page ${page}`).to.equal(200);
        expect(res.body, path).to.include({ totalCount: total, page, perPage });
        expect(res.body[list.key], path).to.have.length(Math.min(perPage, total - (page - 1) * perPage));
        paged.push(...res.body[list.key].map((item: Record<string, string>) => item[list.id]));
      }
      expect(paged.slice(0, ids.length), `${path}: the pages, in order, are the whole list`).to.deep.equal(ids);
      const beyond = await get(list.as(), withQuery(path, `perpage=${total}&page=2`));
      expect(beyond.body, path).to.deep.include({ totalCount: total, [list.key]: [] });

      for (const bad of ['perpage=0', 'page=0', 'perpage=1001', 'perpage=two', 'page=-1']) {
        const res = await get(list.as(), withQuery(path, bad));
        expect(res.status, `${path}?${bad}`).to.equal(400);
        expect(res.body.message, `${path}?${bad}`).to.be.a('string');
      }
    }
  });

  it('/api/auth/keys pages together with includeExpired', async () => {
    const res = await get(admin, '/api/auth/keys?perpage=2&page=2&includeExpired=true');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({ totalCount: 3, page: 2, perPage: 2 });
    expect(res.body.keys.map((key: { name: string }) => key.name)).to.deep.equal(['k3']);
  });

  it('the org users lists also search login, email and name with query', async () => {
    const named = await createUser(app, { orgId, login: 'findable-person', name: 'Zed Findable' });
    for (const path of ['/api/org/users', `/api/orgs/${orgId}/users`]) {
      for (const query of ['FINDABLE', 'zed', 'findable-person@']) {
        const res = await get(admin, `${path}?query=${encodeURIComponent(query)}`);
        expect(res.status).to.equal(200);
        expect(res.body.totalCount, `${path} ${query}`).to.equal(1);
        expect(res.body.orgUsers[0].userId).to.equal(named.id);
      }
      expect((await get(admin, `${path}?query=${encodeURIComponent('%')}`)).body.totalCount).to.equal(0);
    }
  });
});
