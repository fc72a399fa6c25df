/**
 * The general rate limit (RATE_LIMIT_PER_MINUTE): per API token, per signed-in user, per address
 * for anonymous requests; 429 with Retry-After beyond it; counted in the database, so instances
 * share it and parallel requests count exactly; a new minute starts over; health, metrics and the
 * password login are exempt.
 */
import { expect } from 'chai';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, loadConfig } from '../src/config.ts';
import { createTestDatabase, startTestApp, TestClock, type TestApp } from './helpers/app.ts';
import { buildServiceAccount, buildToken, createUser, DEFAULT_PASSWORD, passwordLogin } from './helpers/factories.ts';

const LIMIT = 3;

describe('rate limit', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  });
  afterEach(async () => {
    await app.close();
  });

  const statuses = async (times: number, send: () => Promise<{ status: number }>) => {
    const seen: number[] = [];
    for (let i = 0; i < times; i++) seen.push((await send()).status);
    return seen;
  };

  it('refuses the request beyond the limit with 429, a message and Retry-After until the minute ends', async () => {
    const account = await buildServiceAccount(app);
    const { key } = await buildToken(app, account);
    expect(await statuses(LIMIT, () => app.request('GET', '/api/org', { token: key }))).to.deep.equal([200, 200, 200]);
    app.clock.advance(15_000);
    const refused = await app.request('GET', '/api/org', { token: key });
    expect(refused.status).to.equal(429);
    expect(refused.body).to.deep.equal({ message: `too many requests: at most ${LIMIT} per minute (retry after 45 seconds)` });
    expect(refused.headers.get('retry-after')).to.equal('45');
  });

  it('counts different tokens apart', async () => {
    const account = await buildServiceAccount(app);
    const first = await buildToken(app, account);
    const second = await buildToken(app, account);
    expect(await statuses(LIMIT + 1, () => app.request('GET', '/api/org', { token: first.key }))).to.deep.equal([200, 200, 200, 429]);
    expect((await app.request('GET', '/api/org', { token: second.key })).status).to.equal(200);
    // X-Api-Key is the same token, counted together with its Bearer use
    expect((await app.request('GET', '/api/org', { headers: { 'x-api-key': first.key } })).status).to.equal(429);
  });

  it('counts a signed-in user across sessions, apart from other users', async () => {
    const alice = await createUser(app);
    const bob = await createUser(app);
    const secondSession = (await passwordLogin(app, alice.login, DEFAULT_PASSWORD)).cookies.svc_session!;
    expect((await app.request('GET', '/api/user', { cookie: alice.cookie })).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { cookie: `svc_session=${secondSession}` })).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { cookie: alice.cookie })).status).to.equal(200);
    expect((await app.request('GET', '/api/user', { cookie: `svc_session=${secondSession}` })).status).to.equal(429);
    expect((await app.request('GET', '/api/user', { cookie: bob.cookie })).status).to.equal(200);
  });

  it('counts anonymous requests per client address (behind a trusted proxy, per forwarded address)', async () => {
    const proxied = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), TRUSTED_PROXIES: '127.0.0.0/8' } });
    try {
      const from = (ip: string) => proxied.request('GET', '/api/login/providers', { headers: { 'x-forwarded-for': ip } });
      expect(await statuses(LIMIT + 1, () => from('198.51.100.1'))).to.deep.equal([200, 200, 200, 429]);
      expect((await from('198.51.100.2')).status).to.equal(200);
    } finally {
      await proxied.close();
    }
  });

  it('starts over in the next minute', async () => {
    const user = await createUser(app);
    const me = () => app.request('GET', '/api/user', { cookie: user.cookie });
    expect(await statuses(LIMIT + 1, me)).to.deep.equal([200, 200, 200, 429]);
    app.clock.advance(59_999);
    expect((await me()).status).to.equal(429);
    app.clock.advance(1);
    expect(await statuses(LIMIT + 1, me)).to.deep.equal([200, 200, 200, 429]);
  });

  it('exempts health, metrics and the password login (which has its own lockout)', async () => {
    const user = await createUser(app);
    for (let i = 0; i < LIMIT + 2; i++) {
      expect((await app.request('GET', '/api/health')).status).to.equal(200);
      expect((await app.request('GET', '/api/health/ready')).status).to.equal(200);
      expect((await app.request('GET', '/metrics')).status).to.equal(200);
      expect((await passwordLogin(app, user.login, DEFAULT_PASSWORD)).status).to.equal(200);
    }
    expect((await app.request('GET', '/api/login/providers')).status).to.equal(200);
  });

  it('does not count a request its token cannot authenticate', async () => {
    for (let i = 0; i < LIMIT + 2; i++) expect((await app.request('GET', '/api/org', { token: 'svc_sa_dead' })).status).to.equal(401);
    expect(await app.count('rate_limit_counters')).to.equal(0);
  });

  it('counts 50 parallel requests exactly: the first LIMIT pass, every other is refused', async function () {
    this.timeout(30_000);
    const limit = 20;
    const busy = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: String(limit) } });
    try {
      const { key } = await buildToken(busy, await buildServiceAccount(busy));
      const seen = await Promise.all(Array.from({ length: 50 }, () => busy.request('GET', '/api/org', { token: key })));
      expect(seen.filter((res) => res.status === 200)).to.have.length(limit);
      expect(seen.filter((res) => res.status === 429)).to.have.length(50 - limit);
      const [counter] = await busy.db('rate_limit_counters').select('hits');
      expect(Number(counter.hits)).to.equal(50);
    } finally {
      await busy.close();
    }
  });

  it('is shared by instances on the same database', async () => {
    const database = await createTestDatabase();
    const clock = new TestClock();
    const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT) };
    const a = await startTestApp({ database, clock, env });
    const b = await startTestApp({ database, clock, env });
    try {
      const user = await createUser(a);
      const on = (instance: TestApp) => instance.request('GET', '/api/user', { cookie: user.cookie });
      expect([(await on(a)).status, (await on(b)).status, (await on(a)).status]).to.deep.equal([200, 200, 200]);
      expect((await on(b)).status).to.equal(429);
      expect((await on(a)).status).to.equal(429);
      clock.advance(60_000);
      expect((await on(b)).status).to.equal(200);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });

  it('forgets the counters of callers gone quiet for a whole window', async () => {
    const quiet = await createUser(app);
    const active = await createUser(app);
    await app.request('GET', '/api/user', { cookie: quiet.cookie });
    app.clock.advance(120_000);
    await app.request('GET', '/api/user', { cookie: active.cookie });
    // the prune runs beside the request that opened the window; let it land (a busy machine may take seconds)
    for (let i = 0; i < 1000 && (await app.count('rate_limit_counters')) > 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await app.count('rate_limit_counters')).to.equal(1);
  });

  it('defaults to 600 a minute, off under NODE_ENV=test unless set; 0 turns it off', () => {
    const secrets = { SECRET_KEY: 'x'.repeat(32), JWT_SECRET: 'y'.repeat(32) };
    expect(DEFAULT_RATE_LIMIT_PER_MINUTE).to.equal(600);
    expect(loadConfig({ ...secrets, NODE_ENV: 'production' }).rateLimitPerMinute).to.equal(600);
    expect(loadConfig({ ...secrets, NODE_ENV: 'test' }).rateLimitPerMinute).to.equal(0);
    expect(loadConfig({ ...secrets, NODE_ENV: 'test', RATE_LIMIT_PER_MINUTE: '0' }).rateLimitPerMinute).to.equal(0);
    expect(() => loadConfig({ ...secrets, RATE_LIMIT_PER_MINUTE: '-1' })).to.throw(/RATE_LIMIT_PER_MINUTE must be at least 0/);
  });
});
