import { expect } from 'chai';
import { verifyPassword } from '../src/crypto/password.ts';
import { addMember, auditEntries, createOrg, createUser, DEFAULT_PASSWORD, DENIED, liveSessions, sessionCookie, type TestUser } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

const USER_FIELDS = ['id', 'email', 'login', 'name', 'theme', 'orgId', 'isSvcAdmin', 'orgs', 'authLabels', 'isDisabled', 'avatarUrl'];
const INVALID = 'invalid username or password';
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

  const as = (user: TestUser) => ({
    get: (path: string) => app.request('GET', path, { cookie: user.cookie }),
    post: (path: string, body?: unknown) => app.request('POST', path, { cookie: user.cookie, body }),
    patch: (path: string, body?: unknown) => app.request('PATCH', path, { cookie: user.cookie, body }),
    delete: (path: string) => app.request('DELETE', path, { cookie: user.cookie }),
  });
  const login = (user: string, password: string) => app.request('POST', '/api/login', { body: { user, password } });
  const userRow = (id: string) => app.db('users').where('id', id).first();

  const audits = (action: string, userId: string) => auditEntries(app, { action, target_id: userId });

  async function expectAudited(action: string, user: { id: string; login: string }, metadata?: Record<string, unknown>) {
    const entries = await audits(action, user.id);
    expect(entries, `${action} entries`).to.have.length(1);
    expect(entries[0]).to.include({
      actor_type: 'user',
      actor_id: admin.id,
      actor_name: admin.login,
      target_type: 'user',
      target_name: user.login.toLowerCase(),
      outcome: 'success',
    });
    if (metadata) expect(entries[0]!.metadata).to.deep.equal(metadata);
  }

  async function createServiceAccount(): Promise<TestUser> {
    const sa = await createUser(app, { login: `sa-robot-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}` });
    await app.db('users').where('id', sa.id).update({ is_service_account: true });
    return sa;
  }

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
      const sa = await createServiceAccount();
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
      const sa = await createServiceAccount();

      const res = await as(admin).get('/api/admin/users?perpage=1000');
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
      const all = (await as(admin).get('/api/admin/users?perpage=1000')).body.users.map((u: { id: string }) => u.id);
      const res = await as(admin).get('/api/admin/users?perpage=2&page=2');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ page: 2, perPage: 2, totalCount: all.length });
      expect(res.body.users.map((u: { id: string }) => u.id)).to.deep.equal(all.slice(2, 4));
      const beyond = await as(admin).get('/api/admin/users?perpage=2&page=1000');
      expect(beyond.body.users).to.deep.equal([]);
      expect(beyond.body.totalCount).to.equal(all.length);
    });

    it('matches query against login, email and name, ignoring case, with % and _ literal', async () => {
      const byLogin = await createUser(app, { login: 'quokka-login' });
      const byEmail = await createUser(app, { login: 'plain-one', email: 'wombat.QUOKKA@example.test' });
      const byName = await createUser(app, { login: 'plain-two', name: 'Mister Quokka' });
      await createUser(app, { login: 'unrelated', name: 'Nobody 100%' });
      const ids = async (query: string) => {
        const res = await as(admin).get(`/api/admin/users?query=${encodeURIComponent(query)}`);
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
          const res = await as(admin).get(`/api/admin/users?perpage=${perpage}`);
          expect(res.body.users).to.have.length(perpage);
        } finally {
          app.db.removeListener('query', onQuery);
        }
        return count;
      };
      expect(await queriesFor(20)).to.equal(await queriesFor(1));
    });

    it('rejects bad paging and unknown parameters with 400', async () => {
      for (const query of ['perpage=0', 'perpage=1001', 'page=0', 'page=abc', 'sort=login']) {
        const res = await as(admin).get(`/api/admin/users?${query}`);
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
      const res = await as(admin).post('/api/admin/users', body({ login: 'Nina', email: 'Nina@Example.test' }));
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
      await as(admin).post('/api/admin/users', body({ login: 'fresh-viewer', email: 'fresh-viewer@example.test' }));
      const signedIn = await login('fresh-viewer', NEW_PASSWORD);
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
        const res = await as(admin).post('/api/admin/users', body(clash));
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
        const res = await as(admin).post('/api/admin/users', body({ login: 'badinput', email: 'badinput@example.test', ...overrides }));
        expect(res.status, JSON.stringify(overrides)).to.equal(400);
        expect(res.body.message).to.be.a('string');
      }
      expect((await as(admin).post('/api/admin/users')).status).to.equal(400);
      expect(await app.count('users')).to.equal(users);
    });
  });

  describe('PATCH /api/admin/users/<userId>', () => {
    it('changes name, email and login: 200 with the profile, audited with the field names', async () => {
      const user = await createUser(app, { login: 'before-rename', name: 'Before' });
      const res = await as(admin).patch(`/api/admin/users/${user.id}`, { name: 'After', email: 'After@Example.test', login: 'After-Rename' });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.all.keys(...USER_FIELDS);
      expect(res.body).to.include({ id: user.id, name: 'After', email: 'after@example.test', login: 'after-rename' });
      expect(await userRow(user.id)).to.include({ name: 'After', email: 'after@example.test', login: 'after-rename' });
      await expectAudited('user.updated', { id: user.id, login: 'after-rename' }, { fields: ['email', 'login', 'name'], by: 'admin' });
      expect((await login('after-rename', DEFAULT_PASSWORD)).status).to.equal(200);
    });

    it('changes one field and records only what changed; an unchanged value is no change', async () => {
      const user = await createUser(app, { name: 'Same' });
      const res = await as(admin).patch(`/api/admin/users/${user.id}`, { name: 'Same', login: user.login.toUpperCase(), email: 'moved@example.test' });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ name: 'Same', login: user.login, email: 'moved@example.test' });
      await expectAudited('user.updated', user, { fields: ['email'], by: 'admin' });
      const again = await as(admin).patch(`/api/admin/users/${user.id}`, { email: 'moved@example.test' });
      expect(again.status).to.equal(200);
      expect(await audits('user.updated', user.id)).to.have.length(1);
    });

    it('is 409 for a login or email another user has', async () => {
      const other = await createUser(app, { login: 'patch-owner', email: 'patch-owner@example.test' });
      const user = await createUser(app);
      for (const clash of [{ login: 'PATCH-OWNER' }, { email: 'patch-owner@EXAMPLE.test' }, { login: 'patch-owner@example.test' }]) {
        const res = await as(admin).patch(`/api/admin/users/${user.id}`, clash);
        expect(res.status, JSON.stringify(clash)).to.equal(409);
      }
      expect(await userRow(user.id)).to.include({ login: user.login, email: user.email });
      expect(await audits('user.updated', user.id)).to.have.length(0);
      expect(await userRow(other.id)).to.include({ login: 'patch-owner' });
    });

    it('rejects an empty body, wrong types, unknown fields and malformed values with 400', async () => {
      const user = await createUser(app);
      for (const bad of [{}, { name: 5 }, { email: 'nope' }, { login: 'a b' }, { name: '' }, { isSvcAdmin: true }, { password: NEW_PASSWORD }]) {
        const res = await as(admin).patch(`/api/admin/users/${user.id}`, bad);
        expect(res.status, JSON.stringify(bad)).to.equal(400);
      }
      expect((await as(admin).patch(`/api/admin/users/${user.id}`)).status).to.equal(400);
      expect(await audits('user.updated', user.id)).to.have.length(0);
    });
  });

  describe('DELETE /api/admin/users/<userId>', () => {
    it('deletes the user with memberships and sessions, tells the policy of every org, and is audited', async () => {
      const other = await createOrg(app);
      const user = await createUser(app, { role: 'Editor' });
      await addMember(app, other, user.id, 'Viewer');
      await app
        .db('preferences')
        .insert({ owner_kind: 'user', owner_id: user.id, home_dashboard_uid: '', timezone: 'utc', theme: 'light', updated_at: app.clock.now() });
      const revisions = async () =>
        new Map(
          (await app.db('orgs').select('id', 'policy_revision')).map((o: { id: string; policy_revision: number | string }) => [
            o.id,
            Number(o.policy_revision),
          ]),
        );
      const before = await revisions();

      const res = await as(admin).delete(`/api/admin/users/${user.id}`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user deleted' });
      expect(await app.count('users', { id: user.id })).to.equal(0);
      expect(await app.count('org_members', { user_id: user.id })).to.equal(0);
      expect(await app.count('sessions', { user_id: user.id })).to.equal(0);
      expect(await app.count('preferences', { owner_kind: 'user', owner_id: user.id })).to.equal(0);
      const after = await revisions();
      expect(after.get('org_main')).to.be.greaterThan(before.get('org_main')!);
      expect(after.get(other)).to.be.greaterThan(before.get(other)!);
      await expectAudited('user.deleted', user, { orgIds: ['org_main', other].sort((a, b) => (a === 'org_main' ? -1 : b === 'org_main' ? 1 : 0)) });
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      expect((await login(user.login, DEFAULT_PASSWORD)).status).to.equal(401);
      expect((await as(admin).delete(`/api/admin/users/${user.id}`)).status, 'a second time').to.equal(404);
    });

    it('deletes another server admin', async () => {
      const other = await createUser(app, { svcAdmin: true });
      expect((await as(admin).delete(`/api/admin/users/${other.id}`)).status).to.equal(200);
      expect(await app.count('users', { id: other.id })).to.equal(0);
    });

    it('refuses to delete yourself with 400', async () => {
      const res = await as(admin).delete(`/api/admin/users/${admin.id}`);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/yourself/);
      expect(await app.count('users', { id: admin.id })).to.equal(1);
      expect(await audits('user.deleted', admin.id)).to.have.length(0);
    });

    it('never deletes the last server admin, even when two admins delete each other at once', async () => {
      const lonely = await startTestApp();
      try {
        const a = await createUser(lonely, { svcAdmin: true, role: 'Admin' });
        const b = await createUser(lonely, { svcAdmin: true, role: 'Admin' });
        // Load the server-level policy first: this test is about the admins, not the engine's cold start.
        expect((await lonely.request('GET', '/api/admin/users', { cookie: a.cookie })).status).to.equal(200);
        const [byA, byB] = await Promise.all([
          lonely.request('DELETE', `/api/admin/users/${b.id}`, { cookie: a.cookie }),
          lonely.request('DELETE', `/api/admin/users/${a.id}`, { cookie: b.cookie }),
        ]);
        const statuses = [byA.status, byB.status];
        expect(
          statuses.filter((s) => s === 200),
          JSON.stringify([byA.body, byB.body]),
        ).to.have.length(1);
        expect(
          statuses.filter((s) => s === 400 || s === 401),
          JSON.stringify([byA.body, byB.body]),
        ).to.have.length(1);
        const loser = statuses.find((s) => s !== 200) === byA.status ? byA : byB;
        if (loser.status === 400) expect(loser.body.message).to.equal('cannot delete the last server admin');
        expect(await lonely.count('users', { is_svc_admin: true })).to.equal(1);
      } finally {
        await lonely.close();
      }
    });
  });

  describe('POST /api/admin/users/<userId>/password', () => {
    it('sets the password, revokes every session of the user, and is audited', async () => {
      const user = await createUser(app);
      const second = await sessionCookie(app, user.id);
      const res = await as(admin).post(`/api/admin/users/${user.id}/password`, { password: NEW_PASSWORD });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user password updated', revokedSessions: 2 });
      expect(await verifyPassword(NEW_PASSWORD, (await userRow(user.id)).password_hash)).to.equal(true);
      expect(await liveSessions(app, user.id)).to.equal(0);
      for (const cookie of [user.cookie, second]) expect((await app.request('GET', '/api/user', { cookie })).status).to.equal(401);
      expect((await login(user.login, DEFAULT_PASSWORD)).body).to.deep.equal({ message: INVALID });
      expect((await login(user.login, NEW_PASSWORD)).status).to.equal(200);
      await expectAudited('user.password_changed', user, { by: 'admin' });
      await expectAudited('session.revoked', user, { count: 2, reason: 'password changed by admin' });
      expect(JSON.stringify(await app.db('audit_log').select('*'))).not.to.include(NEW_PASSWORD);
    });

    it('rejects a short, missing or non-string password with 400', async () => {
      const user = await createUser(app);
      for (const bad of [{ password: 'x'.repeat(11) }, {}, { password: 123456789012345 }, { password: NEW_PASSWORD, extra: 1 }]) {
        const res = await as(admin).post(`/api/admin/users/${user.id}/password`, bad);
        expect(res.status, JSON.stringify(bad)).to.equal(400);
      }
      expect(await liveSessions(app, user.id)).to.equal(1);
      expect(await audits('user.password_changed', user.id)).to.have.length(0);
    });
  });

  describe('POST /api/admin/users/<userId>/permissions', () => {
    it('grants the server-admin flag, revokes the sessions and is audited; the user then administers', async () => {
      const user = await createUser(app);
      const res = await as(admin).post(`/api/admin/users/${user.id}/permissions`, { isSvcAdmin: true });
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user permissions updated' });
      expect(!!(await userRow(user.id)).is_svc_admin).to.equal(true);
      expect(await liveSessions(app, user.id)).to.equal(0);
      await expectAudited('user.role_changed', user, { isSvcAdmin: true });
      await expectAudited('session.revoked', user, { count: 1, reason: 'server admin flag changed' });
      const fresh = await sessionCookie(app, user.id);
      expect((await app.request('GET', '/api/admin/users', { cookie: fresh })).status).to.equal(200);
    });

    it('removes the flag of another admin', async () => {
      const other = await createUser(app, { svcAdmin: true });
      expect((await as(admin).post(`/api/admin/users/${other.id}/permissions`, { isSvcAdmin: false })).status).to.equal(200);
      expect(!!(await userRow(other.id)).is_svc_admin).to.equal(false);
      await expectAudited('user.role_changed', other, { isSvcAdmin: false });
      expect((await app.request('GET', '/api/admin/users', { cookie: await sessionCookie(app, other.id) })).status).to.equal(403);
    });

    it('changes nothing, revokes nothing and records nothing when the flag is already so', async () => {
      const user = await createUser(app);
      expect((await as(admin).post(`/api/admin/users/${user.id}/permissions`, { isSvcAdmin: false })).status).to.equal(200);
      expect(await liveSessions(app, user.id)).to.equal(1);
      expect(await audits('user.role_changed', user.id)).to.have.length(0);
    });

    it('refuses to remove your own flag with 400', async () => {
      const res = await as(admin).post(`/api/admin/users/${admin.id}/permissions`, { isSvcAdmin: false });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/your own/);
      expect(!!(await userRow(admin.id)).is_svc_admin).to.equal(true);
      expect((await as(admin).post(`/api/admin/users/${admin.id}/permissions`, { isSvcAdmin: true })).status, 'keeping it is fine').to.equal(200);
      expect(await audits('user.role_changed', admin.id)).to.have.length(0);
    });

    it('rejects a missing or non-boolean flag with 400', async () => {
      const user = await createUser(app);
      for (const bad of [{}, { isSvcAdmin: 'true' }, { isSvcAdmin: 1 }, { isSvcAdmin: true, role: 'Admin' }]) {
        expect((await as(admin).post(`/api/admin/users/${user.id}/permissions`, bad)).status, JSON.stringify(bad)).to.equal(400);
      }
      expect(!!(await userRow(user.id)).is_svc_admin).to.equal(false);
    });
  });

  describe('POST /api/admin/users/<userId>/disable and /enable', () => {
    it('disables: sessions revoked, login gives the wrong-password 401, audited; idempotent', async () => {
      const user = await createUser(app);
      const res = await as(admin).post(`/api/admin/users/${user.id}/disable`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user disabled' });
      expect(!!(await userRow(user.id)).is_disabled).to.equal(true);
      expect(await liveSessions(app, user.id)).to.equal(0);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      const refused = await login(user.login, DEFAULT_PASSWORD);
      expect(refused.status).to.equal(401);
      expect(refused.body).to.deep.equal({ message: INVALID });
      await expectAudited('user.disabled', user);
      await expectAudited('session.revoked', user, { count: 1, reason: 'user disabled' });

      const again = await as(admin).post(`/api/admin/users/${user.id}/disable`);
      expect(again.status).to.equal(200);
      expect(await audits('user.disabled', user.id)).to.have.length(1);
      const listed = (await as(admin).get(`/api/admin/users?query=${user.login}`)).body.users[0];
      expect(listed.isDisabled).to.equal(true);
    });

    it('enables: login works again, old sessions stay revoked, audited; idempotent', async () => {
      const user = await createUser(app);
      await as(admin).post(`/api/admin/users/${user.id}/disable`);
      const res = await as(admin).post(`/api/admin/users/${user.id}/enable`);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'user enabled' });
      expect(!!(await userRow(user.id)).is_disabled).to.equal(false);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      expect((await login(user.login, DEFAULT_PASSWORD)).status).to.equal(200);
      await expectAudited('user.enabled', user);
      expect((await as(admin).post(`/api/admin/users/${user.id}/enable`)).status).to.equal(200);
      expect(await audits('user.enabled', user.id)).to.have.length(1);
    });

    it('revokes sessions left over on a user disabled before', async () => {
      const user = await createUser(app, { disabled: true });
      expect(await liveSessions(app, user.id)).to.equal(1);
      expect((await as(admin).post(`/api/admin/users/${user.id}/disable`)).status).to.equal(200);
      expect(await liveSessions(app, user.id)).to.equal(0);
      expect(await audits('user.disabled', user.id)).to.have.length(0);
      await expectAudited('session.revoked', user, { count: 1, reason: 'user disabled' });
    });

    it('disables another server admin, who then cannot administer', async () => {
      const other = await createUser(app, { svcAdmin: true });
      expect((await as(admin).post(`/api/admin/users/${other.id}/disable`)).status).to.equal(200);
      expect((await app.request('GET', '/api/admin/users', { cookie: await sessionCookie(app, other.id) })).status).to.equal(401);
    });

    it('refuses to disable yourself with 400', async () => {
      const res = await as(admin).post(`/api/admin/users/${admin.id}/disable`);
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/yourself/);
      expect(!!(await userRow(admin.id)).is_disabled).to.equal(false);
      expect((await as(admin).get('/api/admin/users?perpage=1')).status).to.equal(200);
    });
  });
});
