/** Server administration of users (`/api/admin/users`): access, listing, creating and changing a user. */
import { expect } from 'chai';
import { verifyPassword } from '../src/crypto/password.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import {
  addMember,
  api,
  auditEntries,
  buildServiceAccount,
  createOrg,
  createUser,
  DEFAULT_PASSWORD,
  DENIED,
  expectAuditEntry,
  liveSessions,
  passwordLogin,
  type TestUser,
} from './helpers/factories.ts';

const USER_FIELDS = ['id', 'email', 'login', 'name', 'theme', 'orgId', 'isSvcAdmin', 'orgs', 'authLabels', 'isDisabled', 'avatarUrl'];
const NEW_PASSWORD = 'a brand new passphrase';

describe('server administration of users', () => {
  let app: TestApp;
  let admin: TestUser;
  let orgAdmin: TestUser;

  before(async () => {
    app = await startTestApp();
    admin = await createUser(app, { svcAdmin: true, role: 'Admin', login: 'root-admin' });
    orgAdmin = await createUser(app, { role: 'Admin' });
  });
  after(async () => {
    await app.close();
  });

  const userRow = (id: string) => app.db('users').where('id', id).first();
  const audits = (action: string, userId: string) => auditEntries(app, { action, target_id: userId });

  const expectAudited = (action: string, user: { id: string; login: string }, metadata?: Record<string, unknown>) =>
    expectAuditEntry(
      app,
      { action, target_id: user.id },
      {
        actor_type: 'user',
        actor_id: admin.id,
        actor_name: admin.login,
        target_type: 'user',
        target_name: user.login.toLowerCase(),
        outcome: 'success',
        ...(metadata && { metadata }),
      },
      1,
    );

  describe('access', () => {
    const endpoints: Array<{ method: string; path: (id: string) => string; body?: unknown }> = [
      { method: 'GET', path: () => '/api/admin/users' },
      { method: 'POST', path: () => '/api/admin/users', body: { name: 'N', login: 'intruder', email: 'intruder@example.test', password: NEW_PASSWORD } },
      { method: 'PATCH', path: (id) => `/api/admin/users/${id}`, body: { name: 'Renamed' } },
      { method: 'DELETE', path: (id) => `/api/admin/users/${id}` },
      { method: 'POST', path: (id) => `/api/admin/users/${id}/password`, body: { password: NEW_PASSWORD } },
      { method: 'POST', path: (id) => `/api/admin/users/${id}/permissions`, body: { isSvcAdmin: true } },
      { method: 'POST', path: (id) => `/api/admin/users/${id}/disable` },
      { method: 'POST', path: (id) => `/api/admin/users/${id}/enable` },
      { method: 'POST', path: (id) => `/api/admin/users/${id}/logout` },
      { method: 'GET', path: (id) => `/api/admin/users/${id}/auth-tokens` },
      { method: 'POST', path: (id) => `/api/admin/users/${id}/revoke-auth-token`, body: { authTokenId: 'ses_0000000000000000' } },
    ];

    for (const endpoint of endpoints) {
      const name = `${endpoint.method} ${endpoint.path('<userId>')}`;

      it(`${name} is 401 without a session`, async () => {
        const target = await createUser(app);
        const res = await app.request(endpoint.method, endpoint.path(target.id), { body: endpoint.body });
        expect(res.status).to.equal(401);
        expect(res.body.message).to.be.a('string');
      });

      it(`${name} is 403 for an org admin who is not a server admin, and changes nothing`, async () => {
        const target = await createUser(app);
        const before = await userRow(target.id);
        const auditsBefore = await app.count('audit_log', { outcome: 'success' });
        const res = await app.request(endpoint.method, endpoint.path(target.id), { cookie: orgAdmin.cookie, body: endpoint.body });
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(DENIED);
        expect(await userRow(target.id)).to.deep.equal(before);
        expect(await liveSessions(app, target.id)).to.equal(1);
        expect(await app.count('audit_log', { outcome: 'success' })).to.equal(auditsBefore);
        expect(await app.count('users', { login: 'intruder' })).to.equal(0);
      });
    }

    it('answers 404 for an unknown user and for a service account on every user endpoint', async () => {
      const sa = await buildServiceAccount(app);
      for (const endpoint of endpoints.filter((e) => e.path('x') !== '/api/admin/users')) {
        for (const id of ['usr_doesnotexist0000', sa.id]) {
          const res = await app.request(endpoint.method, endpoint.path(id), { cookie: admin.cookie, body: endpoint.body });
          expect(res.status, `${endpoint.method} ${endpoint.path(id)}`).to.equal(404);
          expect(res.body.message).to.be.a('string');
        }
      }
      expect(await app.count('users', { id: sa.id })).to.equal(1);
    });
  });

  describe('GET /api/admin/users', () => {
    it('lists people of every org with their orgs, never service accounts', async () => {
      const other = await createOrg(app, { name: 'Zeta Org' });
      const member = await createUser(app, { name: 'Lister Person', role: 'Editor' });
      await addMember(app, other, member.id, 'Admin');
      const outsider = await createUser(app, { orgId: other, role: 'Viewer' });
      const loner = await createUser(app, { orgId: null });
      const sa = await buildServiceAccount(app);

      const res = await api(app, admin).get('/api/admin/users?perpage=1000');
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys('totalCount', 'users', 'page', 'perPage');
      expect(res.body).to.include({ page: 1, perPage: 1000 });
      const humans = await app.count('users', { is_service_account: false });
      expect(res.body.totalCount).to.equal(humans);
      expect(res.body.users).to.have.length(humans);
      const byId = new Map(res.body.users.map((u: { id: string }) => [u.id, u]));
      expect(byId.has(sa.id)).to.equal(false);
      for (const user of res.body.users) expect(user).to.have.all.keys(...USER_FIELDS);
      expect(byId.get(member.id)).to.deep.include({ login: member.login, name: 'Lister Person', orgId: 'org_main', isSvcAdmin: false, isDisabled: false });
      expect((byId.get(member.id) as { orgs: unknown }).orgs).to.deep.equal([
        { orgId: 'org_main', name: 'Main Org.', role: 'Editor' },
        { orgId: other, name: 'Zeta Org', role: 'Admin' },
      ]);
      expect((byId.get(outsider.id) as { orgs: unknown }).orgs).to.deep.equal([{ orgId: other, name: 'Zeta Org', role: 'Viewer' }]);
      expect((byId.get(loner.id) as { orgs: unknown }).orgs).to.deep.equal([]);
      expect((byId.get(admin.id) as { isSvcAdmin: boolean }).isSvcAdmin).to.equal(true);
      const logins = res.body.users.map((u: { login: string }) => u.login);
      expect(logins).to.deep.equal([...logins].sort());
    });

    it('pages with perpage and page', async () => {
      const all = (await api(app, admin).get('/api/admin/users?perpage=1000')).body.users.map((u: { id: string }) => u.id);
      const res = await api(app, admin).get('/api/admin/users?perpage=2&page=2');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ page: 2, perPage: 2, totalCount: all.length });
      expect(res.body.users.map((u: { id: string }) => u.id)).to.deep.equal(all.slice(2, 4));
      const beyond = await api(app, admin).get('/api/admin/users?perpage=2&page=1000');
      expect(beyond.body.users).to.deep.equal([]);
      expect(beyond.body.totalCount).to.equal(all.length);
    });

    it('matches query against login, email and name, ignoring case, with % and _ literal', async () => {
      const byLogin = await createUser(app, { login: 'quokka-login' });
      const byEmail = await createUser(app, { login: 'plain-one', email: 'wombat.QUOKKA@example.test' });
      const byName = await createUser(app, { login: 'plain-two', name: 'Mister Quokka' });
      await createUser(app, { login: 'unrelated', name: 'Nobody 100%' });
      const ids = async (query: string) => {
        const res = await api(app, admin).get(`/api/admin/users?query=${encodeURIComponent(query)}`);
        expect(res.status).to.equal(200);
        expect(res.body.totalCount).to.equal(res.body.users.length);
        return res.body.users.map((u: { id: string }) => u.id).sort();
      };
      expect(await ids('QuOkKa')).to.deep.equal([byLogin.id, byEmail.id, byName.id].sort());
      expect(await ids('wombat')).to.deep.equal([byEmail.id]);
      expect(await ids('%')).to.have.length(1);
      expect(await ids('plain_')).to.deep.equal([]);
      expect(await ids('no such person')).to.deep.equal([]);
    });

    it('costs the same number of queries for 1 user as for 20 (no query per user)', async () => {
      for (let i = 0; i < 20; i++) await createUser(app);
      const queriesFor = async (perpage: number) => {
        let count = 0;
        const onQuery = () => count++;
        app.db.on('query', onQuery);
        try {
          const res = await api(app, admin).get(`/api/admin/users?perpage=${perpage}`);
          expect(res.body.users).to.have.length(perpage);
        } finally {
          app.db.removeListener('query', onQuery);
        }
        return count;
      };
      // the first request of the admin's session reads it; the next ones find it cached
      await queriesFor(1);
      expect(await queriesFor(20)).to.equal(await queriesFor(1));
    });

    it('rejects bad paging and unknown parameters with 400', async () => {
      for (const query of ['perpage=0', 'perpage=1001', 'page=0', 'page=abc', 'sort=login']) {
        const res = await api(app, admin).get(`/api/admin/users?${query}`);
        expect(res.status, query).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
    });
  });

  describe('POST /api/admin/users', () => {
    const body = (overrides: Record<string, unknown> = {}) => ({
      name: 'Nina New',
      login: 'nina',
      email: 'nina@example.test',
      password: NEW_PASSWORD,
      ...overrides,
    });

    it('creates a local user who joins org_main as Viewer: 201 with the profile, audited', async () => {
      const res = await api(app, admin).post('/api/admin/users', body({ login: 'Nina', email: 'Nina@Example.test' }));
      expect(res.status).to.equal(201);
      expect(res.body).to.have.all.keys(...USER_FIELDS);
      expect(res.body).to.include({
        login: 'nina',
        email: 'nina@example.test',
        name: 'Nina New',
        orgId: 'org_main',
        isSvcAdmin: false,
        isDisabled: false,
        theme: 'dark',
      });
      expect(res.body.orgs).to.deep.equal([{ orgId: 'org_main', name: 'Main Org.', role: 'Viewer' }]);
      expect(res.body.authLabels).to.deep.equal([]);

      const row = await userRow(res.body.id);
      expect(row).to.include({ login: 'nina', email: 'nina@example.test', default_org_id: 'org_main' });
      expect(!!row.is_svc_admin).to.equal(false);
      expect(await verifyPassword(NEW_PASSWORD, row.password_hash)).to.equal(true);
      expect(await app.count('org_members', { user_id: res.body.id, org_id: 'org_main', role: 'Viewer' })).to.equal(1);
      await expectAudited('user.created', { id: res.body.id, login: 'nina' }, { isSvcAdmin: false, orgRole: 'Viewer', via: 'admin' });
      expect(JSON.stringify(await app.db('audit_log').select('*'))).not.to.include(NEW_PASSWORD);
    });

    it('gives the new user a working login and Viewer permissions at once', async () => {
      await api(app, admin).post('/api/admin/users', body({ login: 'fresh-viewer', email: 'fresh-viewer@example.test' }));
      const signedIn = await passwordLogin(app, 'fresh-viewer', NEW_PASSWORD);
      expect(signedIn.status).to.equal(200);
      const cookie = signedIn.setCookie.find((c) => c.startsWith('svc_session='))!.split(';')[0]!;
      const permissions = await app.request('GET', '/api/user/permissions', { cookie });
      expect(permissions.status).to.equal(200);
      expect(permissions.body['dashboards:read']).to.include('dashboards:*');
      expect(permissions.body).not.to.have.property('dashboards:write');
    });

    it('is 409 for a login or email taken in any letter case, or a login that is someone’s email', async () => {
      const taken = await createUser(app, { login: 'taken-login', email: 'taken@example.test' });
      const users = await app.count('users');
      for (const clash of [
        { login: 'TAKEN-LOGIN', email: 'other1@example.test' },
        { login: 'other2', email: 'TAKEN@example.test' },
        { login: 'taken@example.test', email: 'other3@example.test' },
      ]) {
        const res = await api(app, admin).post('/api/admin/users', body(clash));
        expect(res.status, JSON.stringify(clash)).to.equal(409);
        expect(res.body.message).to.be.a('string');
      }
      expect(await app.count('users')).to.equal(users);
      expect(await app.count('audit_log', { action: 'user.created', target_name: 'other1' })).to.equal(0);
      expect(await userRow(taken.id)).to.include({ login: 'taken-login', email: 'taken@example.test' });
    });

    it('rejects missing fields, wrong types, a short password and malformed values with 400', async () => {
      const users = await app.count('users');
      const bad: Array<Record<string, unknown>> = [
        { name: undefined },
        { login: undefined },
        { email: undefined },
        { password: undefined },
        { name: 1 },
        { login: ['x'] },
        { password: 123456789012 },
        { isSvcAdmin: true },
        { password: 'x'.repeat(11) },
        { email: 'not-an-email' },
        { login: 'has space' },
        { name: '' },
      ];
      for (const overrides of bad) {
        const res = await api(app, admin).post('/api/admin/users', body({ login: 'badinput', email: 'badinput@example.test', ...overrides }));
        expect(res.status, JSON.stringify(overrides)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await api(app, admin).post('/api/admin/users')).status).to.equal(400);
      expect(await app.count('users')).to.equal(users);
    });
  });

  describe('PATCH /api/admin/users/<userId>', () => {
    it('changes name, email and login: 200 with the profile, audited with the field names', async () => {
      const user = await createUser(app, { login: 'before-rename', name: 'Before' });
      const res = await api(app, admin).patch(`/api/admin/users/${user.id}`, { name: 'After', email: 'After@Example.test', login: 'After-Rename' });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...USER_FIELDS);
      expect(res.body).to.include({ id: user.id, name: 'After', email: 'after@example.test', login: 'after-rename' });
      expect(await userRow(user.id)).to.include({ name: 'After', email: 'after@example.test', login: 'after-rename' });
      await expectAudited('user.updated', { id: user.id, login: 'after-rename' }, { fields: ['email', 'login', 'name'], by: 'admin' });
      expect((await passwordLogin(app, 'after-rename', DEFAULT_PASSWORD)).status).to.equal(200);
    });

    it('changes one field and records only what changed; an unchanged value is no change', async () => {
      const user = await createUser(app, { name: 'Same' });
      const res = await api(app, admin).patch(`/api/admin/users/${user.id}`, { name: 'Same', login: user.login.toUpperCase(), email: 'moved@example.test' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ name: 'Same', login: user.login, email: 'moved@example.test' });
      await expectAudited('user.updated', user, { fields: ['email'], by: 'admin' });
      const again = await api(app, admin).patch(`/api/admin/users/${user.id}`, { email: 'moved@example.test' });
      expect(again.status).to.equal(200);
      expect(await audits('user.updated', user.id)).to.have.length(1);
    });

    it('is 409 for a login or email another user has', async () => {
      const other = await createUser(app, { login: 'patch-owner', email: 'patch-owner@example.test' });
      const user = await createUser(app);
      for (const clash of [{ login: 'PATCH-OWNER' }, { email: 'patch-owner@EXAMPLE.test' }, { login: 'patch-owner@example.test' }]) {
        const res = await api(app, admin).patch(`/api/admin/users/${user.id}`, clash);
        expect(res.status, JSON.stringify(clash)).to.equal(409);
      }
      expect(await userRow(user.id)).to.include({ login: user.login, email: user.email });
      expect(await audits('user.updated', user.id)).to.have.length(0);
      expect(await userRow(other.id)).to.include({ login: 'patch-owner' });
    });

    it('rejects an empty body, wrong types, unknown fields and malformed values with 400', async () => {
      const user = await createUser(app);
      for (const bad of [{}, { name: 5 }, { email: 'nope' }, { login: 'a b' }, { name: '' }, { isSvcAdmin: true }, { password: NEW_PASSWORD }]) {
        const res = await api(app, admin).patch(`/api/admin/users/${user.id}`, bad);
        expect(res.status, JSON.stringify(bad)).to.equal(400);
      }
      expect((await api(app, admin).patch(`/api/admin/users/${user.id}`)).status).to.equal(400);
      expect(await audits('user.updated', user.id)).to.have.length(0);
    });
  });
});
