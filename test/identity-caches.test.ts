/**
 * The per-instance cache of the rows behind a credential (src/identity/caches.ts):
 * a warm request reads no session, token or user row; every change that ends or alters a
 * principal is seen by the next request on the same instance; a change made by another
 * instance is seen within PRINCIPAL_CACHE_TTL_MS.
 */
import { expect } from 'chai';
import { createTestDatabase, startTestApp, statementsDuring, type TestApp } from './helpers/app.ts';
import { api, buildServiceAccount, buildToken, createUser, passwordLogin } from './helpers/factories.ts';
import { sha256Hex } from '../src/crypto/tokens.ts';
import { SESSION_COOKIE } from '../src/http/authenticate.ts';
import { rememberedCookieKeys } from '../src/identity/sessions.ts';

const readsCredentialRows = (statements: string[]) =>
  statements.filter((sql) => /from [`"]?(sessions|api_tokens|users)[`"]? where/i.test(sql) && /^select/i.test(sql));

describe('the identity caches', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('serves a warm session or token without reading its rows again', async () => {
    const user = await createUser(app);
    const account = await buildServiceAccount(app);
    const { key } = await buildToken(app, account);
    await api(app, user).get('/api/user/permissions');
    await app.request('GET', '/api/serviceaccounts/search', { headers: { authorization: `Bearer ${key}` } });

    const bySession = await statementsDuring(app, () => api(app, user).get('/api/user/permissions'));
    const byToken = await statementsDuring(app, async () => {
      const res = await app.request('GET', '/api/org', { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).to.equal(200);
    });
    expect(readsCredentialRows(bySession)).to.deep.equal([]);
    expect(readsCredentialRows(byToken)).to.deep.equal([]);
  });

  it('keeps no token or session cookie as it was presented: the caches know them by their SHA-256', async () => {
    const user = await createUser(app);
    const account = await buildServiceAccount(app);
    const { key } = await buildToken(app, account);
    expect((await app.request('GET', '/api/org', { headers: { authorization: `Bearer ${key}` } })).status).to.equal(200);
    expect((await api(app, user).get('/api/user')).status).to.equal(200);

    const cookieValue = user.cookie.slice(`${SESSION_COOKIE}=`.length);
    const sessionToken = cookieValue.slice(0, cookieValue.lastIndexOf('.'));
    const { caches, config } = app.services;
    const keys = [...caches.tokens.keys(), ...caches.sessions.keys(), ...rememberedCookieKeys(config)];
    for (const credential of [key, cookieValue, sessionToken]) {
      expect(keys.some((cacheKey) => cacheKey.includes(credential))).to.equal(false);
    }
    expect(caches.tokens.keys()).to.include(sha256Hex(key));
    expect(caches.sessions.keys()).to.include(sha256Hex(sessionToken));
    expect(rememberedCookieKeys(config)).to.include(sha256Hex(cookieValue));
  });

  it('sees a logout, a revoked session, a disable and a password change at the next request', async () => {
    const admin = await createUser(app, { svcAdmin: true });
    const cases: Array<[string, (user: Awaited<ReturnType<typeof createUser>>) => Promise<unknown>]> = [
      ['logout', (user) => app.request('POST', '/api/logout', { cookie: user.cookie })],
      ['session revoked by an admin', (user) => api(app, admin).post(`/api/admin/users/${user.id}/logout`)],
      ['disabled', (user) => api(app, admin).post(`/api/admin/users/${user.id}/disable`)],
      ['password changed by an admin', (user) => api(app, admin).post(`/api/admin/users/${user.id}/password`, { password: 'another password 123!' })],
      ['deleted', (user) => api(app, admin).delete(`/api/admin/users/${user.id}`)],
    ];
    for (const [change, make] of cases) {
      const user = await createUser(app);
      expect((await api(app, user).get('/api/user')).status, `${change}: warm`).to.equal(200);
      const made = (await make(user)) as { status: number };
      expect(made.status, `${change}: the change itself`).to.be.oneOf([200, 204, 302]);
      expect((await api(app, user).get('/api/user')).status, change).to.equal(401);
    }
  });

  it('sees a revoked or deleted token and a disabled service account at the next request', async () => {
    const admin = await createUser(app, { role: 'Admin' });
    const cases: Array<[string, (accountId: string, tokenId: string) => Promise<{ status: number }>]> = [
      ['token deleted', (accountId, tokenId) => api(app, admin).delete(`/api/serviceaccounts/${accountId}/tokens/${tokenId}`)],
      ['account disabled', (accountId) => api(app, admin).patch(`/api/serviceaccounts/${accountId}`, { isDisabled: true })],
      ['account deleted', (accountId) => api(app, admin).delete(`/api/serviceaccounts/${accountId}`)],
    ];
    for (const [change, make] of cases) {
      const account = await buildServiceAccount(app);
      const { id, key } = await buildToken(app, account);
      const asToken = () => app.request('GET', '/api/org', { headers: { authorization: `Bearer ${key}` } });
      expect((await asToken()).status, `${change}: warm`).to.equal(200);
      expect((await make(account.id, id)).status, `${change}: the change itself`).to.equal(200);
      expect((await asToken()).status, change).to.equal(401);
    }
  });

  it('sees an expired session or token without reading the database (time limits are checked on every use)', async () => {
    const user = await createUser(app);
    const account = await buildServiceAccount(app);
    const { key } = await buildToken(app, account, { secondsToLive: 60 });
    const asToken = () => app.request('GET', '/api/org', { headers: { authorization: `Bearer ${key}` } });
    expect((await asToken()).status).to.equal(200);
    expect((await api(app, user).get('/api/user')).status).to.equal(200);
    app.clock.advance(app.services.config.session.maxLifetimeMs);
    expect((await asToken()).status).to.equal(401);
    expect((await api(app, user).get('/api/user')).status).to.equal(401);
  });

  it('sees what another instance changed within PRINCIPAL_CACHE_TTL_MS', async () => {
    const database = await createTestDatabase();
    const first = await startTestApp({ database, env: { PRINCIPAL_CACHE_TTL_MS: '1000' } });
    const second = await startTestApp({ database, clock: first.clock, env: { PRINCIPAL_CACHE_TTL_MS: '1000' } });
    try {
      const admin = await createUser(first, { svcAdmin: true });
      const user = await createUser(first);
      expect((await api(first, user).get('/api/user')).status).to.equal(200);
      expect((await api(second, admin).post(`/api/admin/users/${user.id}/disable`)).status).to.equal(200);
      first.clock.advance(1000);
      expect((await api(first, user).get('/api/user')).status).to.equal(401);
    } finally {
      await second.close();
      await first.close();
      await database.drop();
    }
  });

  it('is off with PRINCIPAL_CACHE_TTL_MS=0: every request reads the session', async () => {
    const uncached = await startTestApp({ env: { PRINCIPAL_CACHE_TTL_MS: '0' } });
    try {
      const user = await createUser(uncached);
      await api(uncached, user).get('/api/user');
      const statements = await statementsDuring(uncached, () => api(uncached, user).get('/api/user'));
      expect(readsCredentialRows(statements).some((sql) => /sessions/.test(sql))).to.equal(true);
    } finally {
      await uncached.close();
    }
  });

  it('keeps nothing a login with a wrong password could poison, and a correct login works at once', async () => {
    const user = await createUser(app, { password: 'first password 123!' });
    expect((await passwordLogin(app, user.login, 'wrong password 123!')).status).to.equal(401);
    expect((await passwordLogin(app, user.login, 'first password 123!')).status).to.equal(200);
  });

  it('does not keep what a load read while a write went by, and bookkeeping updates (last_seen_at) empty nothing', async () => {
    const user = await createUser(app);
    const cache = app.services.caches.sessions;
    let loads = 0;
    const racingLoad = async () => {
      loads += 1;
      await app
        .db('users')
        .where('id', user.id)
        .update({ name: `renamed ${loads}` });
      return { session: {} as never, user: {} as never };
    };
    await cache.get('racing', app.clock.now(), racingLoad);
    await cache.get('racing', app.clock.now(), racingLoad);
    expect(loads).to.equal(2);

    const quietLoad = async () => {
      loads += 1;
      return { session: {} as never, user: {} as never };
    };
    await cache.get('quiet', app.clock.now(), quietLoad);
    await app.db('users').where('id', user.id).update({ last_seen_at: app.clock.now() });
    await app.db('sessions').where('user_id', user.id).update({ last_seen_at: app.clock.now() });
    await cache.get('quiet', app.clock.now(), quietLoad);
    expect(loads).to.equal(3);
  });

  it('answers a warm GET /api/user and an org route without reading the caller, its orgs or its profile again', async () => {
    const user = await createUser(app);
    await api(app, user).get('/api/user');
    await api(app, user).get('/api/teams/search');
    const statements = await statementsDuring(app, async () => {
      expect((await api(app, user).get('/api/user')).status).to.equal(200);
      expect((await api(app, user).get('/api/teams/search')).status).to.equal(200);
    });
    expect(statements.filter((sql) => /from [`"]?(sessions|users|org_members|orgs|preferences|user_auth_links)[`"]?/i.test(sql))).to.deep.equal([]);
  });

  it('shows a changed theme, a new org, a renamed org and a removed membership at the next request', async () => {
    const admin = await createUser(app, { svcAdmin: true });
    const user = await createUser(app);
    const profile = async () => (await api(app, user).get('/api/user')).body as { theme: string; orgs: Array<{ orgId: string; name: string }> };
    await profile();

    expect((await api(app, user).put('/api/user/preferences', { theme: 'light' })).status).to.equal(200);
    expect((await profile()).theme).to.equal('light');

    const created = await api(app, admin).post('/api/orgs', { name: `cache org ${user.login}` });
    const orgId = created.body.id as string;
    expect((await api(app, admin).post(`/api/orgs/${orgId}/users`, { loginOrEmail: user.login, role: 'Viewer' })).status).to.equal(200);
    expect((await profile()).orgs.map((org) => org.orgId)).to.include(orgId);
    expect((await api(app, user, orgId).get('/api/org')).status).to.equal(200);

    expect((await api(app, admin).put(`/api/orgs/${orgId}`, { name: `renamed ${user.login}` })).status).to.equal(200);
    expect((await profile()).orgs.find((org) => org.orgId === orgId)?.name).to.equal(`renamed ${user.login}`);

    expect((await api(app, admin).delete(`/api/orgs/${orgId}/users/${user.id}`)).status).to.equal(200);
    // a removed membership ends the user's sessions (src/orgs/members.ts): the next request is 401
    expect((await api(app, user).get('/api/user')).status).to.equal(401);
  });
});
