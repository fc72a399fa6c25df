import { expect } from 'chai';
import { addMember, auditEntries, buildAuthLink, createOrg, createUser, DEFAULT_PASSWORD, sessionCookie } from './helpers/factories.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';

describe('current user: profile, password, preferences, org switch, sessions, login links', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  describe('PUT /api/user', () => {
    it('is 401 without a session', async () => {
      expect((await app.request('PUT', '/api/user', { body: { name: 'x' } })).status).to.equal(401);
    });

    it('updates name, email and login, and audits the field names', async () => {
      const user = await createUser(app);
      const res = await app.request('PUT', '/api/user', {
        cookie: user.cookie,
        body: { name: 'New Name', email: 'New@Example.test', login: 'newlogin', currentPassword: user.password },
      });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ name: 'New Name', email: 'new@example.test', login: 'newlogin' });
      const [entry] = await auditEntries(app, { action: 'user.updated', target_id: user.id });
      expect(entry!.metadata).to.deep.equal({ fields: ['email', 'login', 'name'], by: 'self' });
    });

    it("cannot take another user's email or login (409)", async () => {
      const other = await createUser(app, { login: 'taken', email: 'taken@example.test' });
      const user = await createUser(app);
      expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { login: 'TAKEN', currentPassword: user.password } })).status).to.equal(409);
      expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { email: other.email, currentPassword: user.password } })).status).to.equal(
        409,
      );
    });

    it("cannot make its login another user's email, which would lock that user out of the login form", async () => {
      const other = await createUser(app, { login: 'ops@team.test', email: 'ada@example.test' });
      const user = await createUser(app);
      expect(
        (await app.request('PUT', '/api/user', { cookie: user.cookie, body: { login: 'ada@example.test', currentPassword: user.password } })).status,
      ).to.equal(409);
      expect(
        (await app.request('PUT', '/api/user', { cookie: user.cookie, body: { email: 'ops@team.test', currentPassword: user.password } })).status,
      ).to.equal(409);
      expect((await app.request('POST', '/api/login', { body: { user: other.email, password: other.password } })).status).to.equal(200);
    });

    it('audits only the fields that changed, and nothing when nothing did', async () => {
      const user = await createUser(app, { name: 'Same' });
      await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 'Same' } });
      expect(await app.count('audit_log', { action: 'user.updated', target_id: user.id })).to.equal(0);
      await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 'Same', email: 'changed@example.test', currentPassword: user.password } });
      const [entry] = await auditEntries(app, { action: 'user.updated', target_id: user.id });
      expect(entry!.metadata).to.deep.equal({ fields: ['email'], by: 'self' });
    });

    it('cannot give itself privileges: unknown fields are 400 and nothing changes', async () => {
      const user = await createUser(app);
      for (const body of [{ isSvcAdmin: true }, { name: 'x', isDisabled: false }, { orgs: [] }, {}]) {
        expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body })).status, JSON.stringify(body)).to.equal(400);
      }
      expect(!!(await app.db('users').where('id', user.id).first()).is_svc_admin).to.equal(false);
    });

    it('rejects wrong types and malformed emails with 400', async () => {
      const user = await createUser(app);
      expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { name: 5 } })).status).to.equal(400);
      expect((await app.request('PUT', '/api/user', { cookie: user.cookie, body: { email: 'nope', currentPassword: user.password } })).status).to.equal(400);
    });
  });

  describe('PUT /api/user/password', () => {
    it('is 401 without a session', async () => {
      expect((await app.request('PUT', '/api/user/password', { body: { oldPassword: 'a', newPassword: 'b'.repeat(12) } })).status).to.equal(401);
    });

    it('needs the old password, takes a new one of 12+ characters, and revokes every other session', async () => {
      const user = await createUser(app, { login: 'changer' });
      const other = await sessionCookie(app, user.id);
      const res = await app.request('PUT', '/api/user/password', {
        cookie: user.cookie,
        body: { oldPassword: DEFAULT_PASSWORD, newPassword: 'a brand new password' },
      });
      expect(res.status).to.equal(200);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status, 'this session lives on').to.equal(200);
      expect((await app.request('GET', '/api/user', { cookie: other })).status, 'the other session is revoked').to.equal(401);
      expect((await app.request('POST', '/api/login', { body: { user: 'changer', password: 'a brand new password' } })).status).to.equal(200);
      expect(await app.count('audit_log', { action: 'user.password_changed', target_id: user.id })).to.equal(1);
      expect(JSON.stringify(await app.db('audit_log').select('*'))).not.to.include('a brand new password');
    });

    it('refuses a wrong old password (400) and a short new one (400), changing nothing', async () => {
      const user = await createUser(app);
      const before = (await app.db('users').where('id', user.id).first()).password_hash;
      const wrong = await app.request('PUT', '/api/user/password', {
        cookie: user.cookie,
        body: { oldPassword: 'not the password', newPassword: 'a brand new password' },
      });
      expect(wrong.status).to.equal(400);
      expect(wrong.body.message).to.match(/old password/);
      expect(
        (await app.request('PUT', '/api/user/password', { cookie: user.cookie, body: { oldPassword: DEFAULT_PASSWORD, newPassword: 'too short' } })).status,
      ).to.equal(400);
      expect((await app.request('PUT', '/api/user/password', { cookie: user.cookie, body: { newPassword: 'a brand new password' } })).status).to.equal(400);
      expect((await app.db('users').where('id', user.id).first()).password_hash).to.equal(before);
    });
  });

  describe('preferences', () => {
    it('are 401 without a session', async () => {
      expect((await app.request('GET', '/api/user/preferences')).status).to.equal(401);
      expect((await app.request('PUT', '/api/user/preferences', { body: {} })).status).to.equal(401);
    });

    it('read empty, then replace all three (an omitted field is reset), and the theme shows on /api/user', async () => {
      const user = await createUser(app);
      expect((await app.request('GET', '/api/user/preferences', { cookie: user.cookie })).body).to.deep.equal({
        homeDashboardUid: '',
        timezone: '',
        theme: '',
      });
      const saved = await app.request('PUT', '/api/user/preferences', {
        cookie: user.cookie,
        body: { homeDashboardUid: 'home', timezone: 'Europe/Paris', theme: 'light' },
      });
      expect(saved.body).to.deep.equal({ homeDashboardUid: 'home', timezone: 'Europe/Paris', theme: 'light' });
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).body.theme).to.equal('light');
      const replaced = await app.request('PUT', '/api/user/preferences', { cookie: user.cookie, body: { timezone: 'utc' } });
      expect(replaced.body).to.deep.equal({ homeDashboardUid: '', timezone: 'utc', theme: '' });
    });

    it('reject an unknown theme or field with 400', async () => {
      const user = await createUser(app);
      expect((await app.request('PUT', '/api/user/preferences', { cookie: user.cookie, body: { theme: 'neon' } })).status).to.equal(400);
      expect((await app.request('PUT', '/api/user/preferences', { cookie: user.cookie, body: { colour: 'red' } })).status).to.equal(400);
    });
  });

  describe('POST /api/user/using/:orgId', () => {
    it('is 401 without a session', async () => {
      expect((await app.request('POST', '/api/user/using/org_main')).status).to.equal(401);
    });

    it('switches the default org to one the user belongs to; /api/user and the permissions follow', async () => {
      const user = await createUser(app, { role: 'Viewer' });
      const other = await createOrg(app);
      await addMember(app, other, user.id, 'Admin');
      const res = await app.request('POST', `/api/user/using/${other}`, { cookie: user.cookie });
      expect(res).to.deep.include({ status: 200, body: { message: 'active organization changed' } });
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).body.orgId).to.equal(other);
      expect((await app.request('GET', '/api/user/permissions', { cookie: user.cookie })).body).to.have.property('org.users:add');
    });

    it('is 403, with the same message, for an org the user does not belong to and for one that does not exist', async () => {
      const user = await createUser(app);
      const other = await createOrg(app);
      const foreign = await app.request('POST', `/api/user/using/${other}`, { cookie: user.cookie });
      const missing = await app.request('POST', '/api/user/using/org_missing', { cookie: user.cookie });
      expect(foreign.status).to.equal(403);
      expect(missing).to.deep.include({ status: 403, body: foreign.body });
      expect((await app.db('users').where('id', user.id).first()).default_org_id).to.equal('org_main');
    });
  });

  describe('sessions: GET /api/user/tokens and POST /api/user/revoke-auth-token', () => {
    it('are 401 without a session', async () => {
      expect((await app.request('GET', '/api/user/tokens')).status).to.equal(401);
      expect((await app.request('POST', '/api/user/revoke-auth-token', { body: { authTokenId: 'x' } })).status).to.equal(401);
    });

    it('list the live sessions, marking the current one, without tokens or hashes', async () => {
      const user = await createUser(app);
      await sessionCookie(app, user.id);
      const res = await app.request('GET', '/api/user/tokens', { cookie: user.cookie });
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ totalCount: 2, page: 1, perPage: 100 });
      expect(res.body.sessions).to.have.length(2);
      expect(res.body.sessions.filter((s: { isCurrent: boolean }) => s.isCurrent)).to.have.length(1);
      expect(res.body.sessions[0]).to.have.all.keys('id', 'isCurrent', 'ip', 'userAgent', 'createdAt', 'seenAt', 'expiresAt');
      const hashes = (await app.db('sessions').select('token_hash')).map((s: { token_hash: string }) => s.token_hash);
      for (const hash of hashes) expect(JSON.stringify(res.body)).not.to.include(hash);
    });

    it("revoke one of the user's sessions, and only the user's", async () => {
      const user = await createUser(app);
      const second = await sessionCookie(app, user.id);
      const stranger = await createUser(app);
      const [secondSession] = (await app.request('GET', '/api/user/tokens', { cookie: user.cookie })).body.sessions.filter(
        (s: { isCurrent: boolean }) => !s.isCurrent,
      );
      const strangerSession = (await app.request('GET', '/api/user/tokens', { cookie: stranger.cookie })).body.sessions[0];
      expect((await app.request('POST', '/api/user/revoke-auth-token', { cookie: user.cookie, body: { authTokenId: strangerSession.id } })).status).to.equal(
        404,
      );
      const res = await app.request('POST', '/api/user/revoke-auth-token', { cookie: user.cookie, body: { authTokenId: secondSession.id } });
      expect(res.status).to.equal(200);
      expect((await app.request('GET', '/api/user', { cookie: second })).status).to.equal(401);
      expect((await app.request('GET', '/api/user', { cookie: stranger.cookie })).status).to.equal(200);
      expect(await app.count('audit_log', { action: 'session.revoked', target_id: secondSession.id })).to.equal(1);
      expect((await app.request('POST', '/api/user/revoke-auth-token', { cookie: user.cookie, body: {} })).status).to.equal(400);
    });
  });

  describe('external login links: /api/user/auth-tokens', () => {
    it('are 401 without a session', async () => {
      expect((await app.request('GET', '/api/user/auth-tokens')).status).to.equal(401);
      expect((await app.request('DELETE', '/api/user/auth-tokens/x')).status).to.equal(401);
    });

    it("list the user's links (none until a provider links one) and unlink one", async () => {
      const user = await createUser(app);
      expect((await app.request('GET', '/api/user/auth-tokens', { cookie: user.cookie })).body).to.deep.equal({
        totalCount: 0,
        authLinks: [],
        page: 1,
        perPage: 100,
      });
      const now = app.clock.now();
      await buildAuthLink(app, user.id, { id: 'lnk_1', authId: 'sub-1' });
      const listed = await app.request('GET', '/api/user/auth-tokens', { cookie: user.cookie });
      expect(listed.body).to.deep.equal({
        totalCount: 1,
        authLinks: [
          { id: 'lnk_1', authModule: 'oauth_generic', label: 'Generic OIDC', createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString() },
        ],
        page: 1,
        perPage: 100,
      });
      const other = await createUser(app);
      expect((await app.request('DELETE', '/api/user/auth-tokens/lnk_1', { cookie: other.cookie })).status).to.equal(404);
      expect((await app.request('DELETE', '/api/user/auth-tokens/lnk_1', { cookie: user.cookie })).status).to.equal(200);
      expect(await app.count('user_auth_links')).to.equal(0);
      expect((await app.request('DELETE', '/api/user/auth-tokens/lnk_1', { cookie: user.cookie })).status).to.equal(404);
    });
  });
});
