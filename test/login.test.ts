import { expect } from 'chai';
import { keyDerivationCount } from '../src/crypto/password.ts';
import { auditEntries, buildServiceAccount, createUser, DEFAULT_PASSWORD, passwordLogin } from './helpers/factories.ts';
import { CookieJar, createTestDatabase, startTestApp, type TestApp } from './helpers/app.ts';

const INVALID = 'invalid username or password';

describe('local login', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it('signs in with login or email: 200 {message, redirectUrl} and an HttpOnly, SameSite=Lax session cookie', async () => {
    const user = await createUser(app, { login: 'grace', email: 'grace@example.test' });
    for (const name of ['grace', 'GRACE@example.test']) {
      const res = await passwordLogin(app, name, DEFAULT_PASSWORD);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'logged in', redirectUrl: '/' });
      const cookie = res.setCookie.find((c) => c.startsWith('svc_session='))!;
      expect(cookie)
        .to.match(/httponly/i)
        .and.match(/samesite=lax/i)
        .and.match(/path=\//i)
        .and.not.match(/secure/i);
      const jar = new CookieJar();
      jar.absorb(res.setCookie);
      expect((await app.request('GET', '/api/user', { jar })).body.id).to.equal(user.id);
    }
    const entries = await auditEntries(app, { action: 'user.login', actor_id: user.id, outcome: 'success' });
    expect(entries).to.have.length(2);
    expect(JSON.stringify(entries)).not.to.include(DEFAULT_PASSWORD);
  });

  it('keeps only a same-site redirect target', async () => {
    await createUser(app, { login: 'redir' });
    const ok = await app.request('POST', '/api/login?redirect=/dashboards/d/abc', { body: { user: 'redir', password: DEFAULT_PASSWORD } });
    expect(ok.body.redirectUrl).to.equal('/dashboards/d/abc');
    for (const target of ['//evil.example/x', 'https://evil.example/', '/\\evil.example']) {
      const res = await app.request('POST', `/api/login?redirect=${encodeURIComponent(target)}`, { body: { user: 'redir', password: DEFAULT_PASSWORD } });
      expect(res.body.redirectUrl, target).to.equal('/');
    }
  });

  it('gives the same 401 for a wrong password, an unknown user, a disabled user and a service account', async () => {
    await createUser(app, { login: 'known' });
    await createUser(app, { login: 'off', disabled: true });
    await buildServiceAccount(app, { name: 'robot' });
    const answers = [
      await passwordLogin(app, 'known', 'wrong password!'),
      await passwordLogin(app, 'nobody', DEFAULT_PASSWORD),
      await passwordLogin(app, 'off', DEFAULT_PASSWORD),
      await passwordLogin(app, 'sa-robot', DEFAULT_PASSWORD),
    ];
    for (const res of answers) {
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({ message: INVALID });
      expect(res.setCookie).to.be.empty;
    }
    const failures = await auditEntries(app, { action: 'user.login_failed', outcome: 'failure' });
    // A service account has no password, so its refusal is recorded as a wrong password.
    expect(failures.map((f) => f.metadata!.reason)).to.have.members(['wrong password', 'unknown user', 'disabled user', 'wrong password']);
    expect(failures.map((f) => f.target_name)).to.have.members(['known', 'nobody', 'off', 'sa-robot']);
    expect(JSON.stringify(failures)).not.to.include('wrong password!');
  });

  it('costs one scrypt on every path: known user, unknown user, disabled user, service account', async () => {
    await createUser(app, { login: 'counted' });
    await createUser(app, { login: 'counted-disabled', disabled: true });
    const account = await buildServiceAccount(app);
    // The decoy hash an unknown user is compared against is made once per process: make it first.
    await passwordLogin(app, 'warm-up-unknown-user', 'wrong-password');
    const derivationsOf = async (user: string, password: string) => {
      const before = keyDerivationCount();
      expect((await passwordLogin(app, user, password)).status).to.equal(401);
      return keyDerivationCount() - before;
    };
    expect(await derivationsOf('counted', 'wrong-password')).to.equal(1);
    expect(await derivationsOf('missing-user', 'wrong-password')).to.equal(1);
    expect(await derivationsOf('counted-disabled', DEFAULT_PASSWORD)).to.equal(1);
    expect(await derivationsOf(account.login, 'wrong-password')).to.equal(1);
  });

  it('rejects bad input with 400', async () => {
    expect((await app.request('POST', '/api/login', { body: { user: 'x' } })).status).to.equal(400);
    expect((await app.request('POST', '/api/login', { body: { user: 1, password: 'x' } })).status).to.equal(400);
    expect((await app.request('POST', '/api/login', { body: { user: '', password: 'x' } })).status).to.equal(400);
  });

  describe('lockout', () => {
    it('answers the 6th attempt within 5 minutes with 429 and Retry-After, even with the right password', async () => {
      await createUser(app, { login: 'target' });
      for (let i = 0; i < 5; i++) expect((await passwordLogin(app, 'target', 'wrong password!')).status).to.equal(401);
      const locked = await passwordLogin(app, 'target', DEFAULT_PASSWORD);
      expect(locked.status).to.equal(429);
      expect(locked.body.message).to.match(/too many login attempts/);
      expect(Number(locked.headers.get('retry-after'))).to.be.within(1, 300);
      app.clock.advance(5 * 60_000);
      expect((await passwordLogin(app, 'target', DEFAULT_PASSWORD)).status).to.equal(200);
    });

    it('is cleared by a successful login', async () => {
      await createUser(app, { login: 'forgetful' });
      for (let i = 0; i < 4; i++) await passwordLogin(app, 'forgetful', 'wrong password!');
      expect((await passwordLogin(app, 'forgetful', DEFAULT_PASSWORD)).status).to.equal(200);
      for (let i = 0; i < 4; i++) expect((await passwordLogin(app, 'forgetful', 'wrong password!')).status).to.equal(401);
      expect((await passwordLogin(app, 'forgetful', DEFAULT_PASSWORD)).status).to.equal(200);
    });

    it('lets at most 5 of 50 concurrent wrong attempts reach the password check', async () => {
      await createUser(app, { login: 'stampede' });
      const results = await Promise.all(Array.from({ length: 50 }, () => passwordLogin(app, 'stampede', 'wrong password!')));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 401)).to.have.length(5);
      expect(statuses.filter((s) => s === 429)).to.have.length(45);
      const checked = (await auditEntries(app, 'user.login_failed')).filter((e) => e.metadata!.reason === 'wrong password');
      expect(checked).to.have.length(5);
    });

    it('is counted per login: another login from the same address is not locked', async () => {
      await createUser(app, { login: 'one' });
      await createUser(app, { login: 'two' });
      for (let i = 0; i < 5; i++) await passwordLogin(app, 'one', 'wrong password!');
      expect((await passwordLogin(app, 'one', DEFAULT_PASSWORD)).status).to.equal(429);
      expect((await passwordLogin(app, 'two', DEFAULT_PASSWORD)).status).to.equal(200);
    });

    it('ignores X-Forwarded-For unless the peer is a trusted proxy', async () => {
      await createUser(app, { login: 'spoofer' });
      for (let i = 0; i < 5; i++) await passwordLogin(app, 'spoofer', 'wrong password!', { 'x-forwarded-for': `10.0.0.${i}` });
      expect((await passwordLogin(app, 'spoofer', DEFAULT_PASSWORD, { 'x-forwarded-for': '10.0.0.99' })).status).to.equal(429);
    });

    it('counts per client behind a trusted proxy', async () => {
      const proxied = await startTestApp({ env: { TRUSTED_PROXIES: '127.0.0.1' } });
      try {
        await createUser(proxied, { login: 'behind' });
        const attempt = (ip: string, password: string) =>
          proxied.request('POST', '/api/login', { body: { user: 'behind', password }, headers: { 'x-forwarded-for': `203.0.113.9, ${ip}` } });
        for (let i = 0; i < 5; i++) await attempt('198.51.100.1', 'wrong password!');
        expect((await attempt('198.51.100.1', DEFAULT_PASSWORD)).status).to.equal(429);
        expect((await attempt('198.51.100.2', DEFAULT_PASSWORD)).status).to.equal(200);
        const [entry] = await auditEntries(proxied, 'user.login');
        expect(entry!.ip).to.equal('198.51.100.2');
      } finally {
        await proxied.close();
      }
    });

    it('is shared by instances on the same database', async () => {
      const database = await createTestDatabase();
      const a = await startTestApp({ database });
      const b = await startTestApp({ database });
      try {
        await createUser(a, { login: 'roamer' });
        const attempt = (instance: TestApp, password: string) => instance.request('POST', '/api/login', { body: { user: 'roamer', password } });
        for (let i = 0; i < 3; i++) await attempt(a, 'wrong password!');
        for (let i = 0; i < 2; i++) await attempt(b, 'wrong password!');
        expect((await attempt(a, DEFAULT_PASSWORD)).status).to.equal(429);
        expect((await attempt(b, DEFAULT_PASSWORD)).status).to.equal(429);
      } finally {
        await a.close();
        await b.close();
        await database.drop();
      }
    });
  });

  describe('providers and DISABLE_LOGIN_FORM', () => {
    it('lists local and every provider with its enabled flag and its url, /api/login/<id> for each', async () => {
      const res = await app.request('GET', '/api/login/providers');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.include({ id: 'local', name: 'Username and password', enabled: true, url: '/api/login/local' });
      expect(res.body.map((p: { id: string }) => p.id)).to.deep.equal(['local', 'codehost', 'workspace', 'generic', 'saml', 'ldap']);
      for (const provider of res.body) expect(provider.url).to.equal(`/api/login/${provider.id}`);
      for (const provider of res.body.slice(1)) expect(provider).to.include({ enabled: false });
    });

    it('GET /api/login/local leads to the login page, keeping a same-site redirect only', async () => {
      for (const [query, location] of [
        ['', '/login'],
        ['?redirect=%2Fdashboards%3Ftab%3D2', '/login?redirect=%2Fdashboards%3Ftab%3D2'],
        ['?redirect=https%3A%2F%2Fevil.example', '/login'],
        ['?redirect=%2F%2Fevil.example', '/login'],
      ]) {
        const res = await app.request('GET', `/api/login/local${query}`);
        expect(res.status, query).to.equal(302);
        expect(res.headers.get('location'), query).to.equal(location);
      }
      const page = await app.request('GET', '/login');
      expect(page.status).to.equal(200);
      expect(page.headers.get('content-type')).to.match(/^text\/html/);
    });

    it('hides and refuses the local form when DISABLE_LOGIN_FORM=true', async () => {
      const closed = await startTestApp({ env: { DISABLE_LOGIN_FORM: 'true' } });
      try {
        await createUser(closed, { login: 'locked-out' });
        const providers = await closed.request('GET', '/api/login/providers');
        expect(providers.body.find((p: { id: string }) => p.id === 'local').enabled).to.equal(false);
        const res = await closed.request('POST', '/api/login', { body: { user: 'locked-out', password: DEFAULT_PASSWORD } });
        expect(res.status).to.equal(403);
        expect(res.body.message).to.match(/disabled/);
      } finally {
        await closed.close();
      }
    });

    it('marks the cookie Secure with SESSION_COOKIE_SECURE=true', async () => {
      const secure = await startTestApp({ env: { SESSION_COOKIE_SECURE: 'true' } });
      try {
        await createUser(secure, { login: 'tls' });
        const res = await secure.request('POST', '/api/login', { body: { user: 'tls', password: DEFAULT_PASSWORD } });
        expect(res.setCookie.find((c) => c.startsWith('svc_session='))).to.match(/;\s*secure/i);
      } finally {
        await secure.close();
      }
    });
  });

  describe('logout', () => {
    it('POST revokes the session, clears the cookie and is audited', async () => {
      const user = await createUser(app);
      const res = await app.request('POST', '/api/logout', { cookie: user.cookie });
      expect(res.status).to.equal(200);
      expect(res.setCookie.find((c) => c.startsWith('svc_session='))).to.match(/^svc_session=;/);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
      const session = await app.db('sessions').where('user_id', user.id).first();
      expect(session.revoked_at).to.not.equal(null);
      expect(await app.count('audit_log', { action: 'user.logout', actor_id: user.id })).to.equal(1);
    });

    it('GET revokes the session and sends the browser to /login', async () => {
      const user = await createUser(app);
      const res = await app.request('GET', '/api/logout', { cookie: user.cookie });
      expect(res.status).to.equal(302);
      expect(res.headers.get('location')).to.equal('/login');
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(401);
    });

    it('is harmless without a session', async () => {
      expect((await app.request('POST', '/api/logout')).status).to.equal(200);
    });
  });
});
