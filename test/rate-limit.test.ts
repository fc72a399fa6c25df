/**
 * The general rate limit (RATE_LIMIT_PER_MINUTE): per API token, per signed-in user, per address
 * for anonymous requests; 429 with Retry-After beyond it; counted in memory, exact on one instance
 * (parallel requests included), shared by instances through the database once a slice
 * (RATE_LIMIT_SYNC_MS); a new minute starts over; health, metrics and the password login are
 * exempt; a caller rotating addresses or tokens fills at most RATE_LIMIT_MAX_KEYS entries.
 */
import { expect } from 'chai';
import { DEFAULT_RATE_LIMIT_PER_MINUTE, loadConfig } from '../src/config.ts';
import { createTestDatabase, startTestApp, statementsDuring, TestClock, type TestApp } from './helpers/app.ts';
import { createLineLogger } from '../src/logging/line-writer.ts';
import { eventually } from './helpers/audit-sink.ts';
import { buildServiceAccount, buildToken, createUser, DEFAULT_PASSWORD, passwordLogin } from './helpers/factories.ts';

const LIMIT = 3;
/** Only the tests' own slices flush (sliceEnds): the timer's would not come within a test. */
const MANUAL_SLICES = { RATE_LIMIT_SYNC_MS: '60000' };

/** A slice ends on `instances`, in order: each adds its counts to the database and reads the totals back (what its timer does every RATE_LIMIT_SYNC_MS). */
const sliceEnds = async (...instances: TestApp[]) => {
  for (const instance of instances) await instance.built.rateCounter!.flush();
};

describe('rate limit', () => {
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), ...MANUAL_SLICES } });
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
    for (let i = 0; i < LIMIT + 2; i++) expect((await app.request('GET', '/api/org', { token: `svc_sa_dead${i}` })).status).to.equal(401);
    await sliceEnds(app);
    expect(app.built.rateCounter!.size).to.equal(0);
    expect(await app.count('rate_limit_counters')).to.equal(0);
  });

  it('counts 50 parallel requests exactly: the first LIMIT pass, every other is refused', async function () {
    this.timeout(90_000);
    const limit = 20;
    const busy = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: String(limit) } });
    try {
      const { key } = await buildToken(busy, await buildServiceAccount(busy));
      const seen = await Promise.all(Array.from({ length: 50 }, () => busy.request('GET', '/api/org', { token: key })));
      expect(seen.filter((res) => res.status === 200)).to.have.length(limit);
      expect(seen.filter((res) => res.status === 429)).to.have.length(50 - limit);
      await sliceEnds(busy);
      const [counter] = await busy.db('rate_limit_counters').select('hits');
      expect(Number(counter.hits)).to.equal(50);
    } finally {
      await busy.close();
    }
  });

  it('is shared by instances on the same database: each refuses what the others counted once it read their totals', async () => {
    const database = await createTestDatabase();
    const clock = new TestClock();
    const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT), ...MANUAL_SLICES };
    const a = await startTestApp({ database, clock, env });
    const b = await startTestApp({ database, clock, env });
    try {
      const user = await createUser(a);
      const on = (instance: TestApp) => instance.request('GET', '/api/user', { cookie: user.cookie });
      expect([(await on(a)).status, (await on(a)).status]).to.deep.equal([200, 200]);
      await sliceEnds(a, b);
      // b has not read this caller's total yet: its first slice counts its own (the third, within the limit)
      expect((await on(b)).status).to.equal(200);
      await sliceEnds(b, a);
      // b read the total of 3 with its flush: a's two and its one
      const refused = await on(b);
      expect(refused.status).to.equal(429);
      clock.advance(20_000);
      expect(refused.headers.get('retry-after')).to.equal('60');
      expect((await on(b)).headers.get('retry-after')).to.equal('40');
      // a counted nothing since its flush, so it read nothing since: it admits within what it knows
      // (its own 2), and the flush that sends this one reads the total back
      expect((await on(a)).status).to.equal(200);
      await sliceEnds(a);
      expect((await on(a)).status).to.equal(429);
      clock.advance(40_000);
      expect((await on(b)).status).to.equal(200);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });

  it('gets past the limit on two instances by at most what each admits before its next flush', async () => {
    const database = await createTestDatabase();
    const clock = new TestClock();
    const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT), ...MANUAL_SLICES };
    const a = await startTestApp({ database, clock, env });
    const b = await startTestApp({ database, clock, env });
    try {
      const { key } = await buildToken(a, await buildServiceAccount(a));
      const on = (instance: TestApp) => instance.request('GET', '/api/org', { token: key });
      // within one slice each instance knows only its own counts: each admits up to the limit
      expect(await statuses(LIMIT + 1, () => on(a))).to.deep.equal([200, 200, 200, 429]);
      expect(await statuses(LIMIT + 1, () => on(b))).to.deep.equal([200, 200, 200, 429]);
      await sliceEnds(a, b);
      await sliceEnds(a);
      const [row] = await a.db('rate_limit_counters').select('hits');
      expect(Number(row.hits)).to.equal(2 * (LIMIT + 1));
      // from then on both know the shared total of 8 and refuse
      expect((await on(a)).status).to.equal(429);
      expect((await on(b)).status).to.equal(429);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });

  it('shares the counts on its own every RATE_LIMIT_SYNC_MS: the other instance soon refuses a caller who used the limit on one', async function () {
    this.timeout(60_000);
    const database = await createTestDatabase();
    const clock = new TestClock();
    const env = { RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_SYNC_MS: '20' };
    const a = await startTestApp({ database, clock, env });
    const b = await startTestApp({ database, clock, env });
    try {
      const user = await createUser(a);
      const on = (instance: TestApp) => instance.request('GET', '/api/user', { cookie: user.cookie });
      expect(await statuses(LIMIT, () => on(a))).to.deep.equal([200, 200, 200]);
      // a's flush carried its counts to the database; b lets a caller it never saw through once,
      // and its next flush reads the totals back: its own count (2) is under the limit, so only
      // the shared counts can refuse the second request
      await eventually('a flush of a', 30_000, async () => Number((await a.db('rate_limit_counters').sum({ hits: 'hits' }))[0]!.hits ?? 0) >= LIMIT);
      expect((await on(b)).status).to.equal(200);
      await eventually('a flush of b', 30_000, async () => Number((await a.db('rate_limit_counters').sum({ hits: 'hits' }))[0]!.hits ?? 0) >= LIMIT + 1);
      const afterFlush = Date.now();
      await eventually('slices after that flush', 30_000, () => Date.now() - afterFlush >= 250);
      expect((await on(b)).status, 'b refuses once the flushes carried the counts').to.equal(429);
      expect((await on(a)).status).to.equal(429);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });

  it('sends no query on the request path: the counts reach the database once a slice, one statement for every caller', async () => {
    const alice = await createUser(app);
    const bob = await createUser(app);
    await app.request('GET', '/api/user', { cookie: alice.cookie });
    await app.request('GET', '/api/user', { cookie: bob.cookie });
    await sliceEnds(app);
    const during = await statementsDuring(app, async () => {
      await app.request('GET', '/api/user', { cookie: alice.cookie });
      await app.request('GET', '/api/user', { cookie: bob.cookie });
    });
    expect(during.filter((sql) => /rate_limit_counters/.test(sql))).to.deep.equal([]);
    const flushed = await statementsDuring(app, () => sliceEnds(app));
    const writes = flushed.filter((sql) => /^\s*insert into rate_limit_counters/i.test(sql));
    expect(writes).to.have.length(1);
    expect(await app.db('rate_limit_counters').sum({ hits: 'hits' }).first()).to.satisfy((row: { hits: number | string }) => Number(row.hits) === 4);
  });

  it('keeps at most RATE_LIMIT_MAX_KEYS callers in memory: a client rotating addresses or tokens cannot exhaust it', async function () {
    this.timeout(120_000);
    const maxKeys = 100;
    const rotated = await startTestApp({
      env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), RATE_LIMIT_MAX_KEYS: String(maxKeys), ...MANUAL_SLICES, TRUSTED_PROXIES: '127.0.0.0/8' },
    });
    try {
      const user = await createUser(rotated);
      const me = () => rotated.request('GET', '/api/user', { cookie: user.cookie });
      expect(await statuses(LIMIT + 1, me)).to.deep.equal([200, 200, 200, 429]);
      // 3 × maxKeys addresses, flushed as they come (600 rows: more than one statement's worth at the end)
      for (let i = 0; i < 3 * maxKeys; i++) {
        const res = await rotated.request('GET', '/api/login/providers', { headers: { 'x-forwarded-for': `198.51.${Math.floor(i / 250)}.${i % 250}` } });
        expect(res.status).to.equal(200);
        if (i % 50 === 49) await sliceEnds(rotated);
      }
      // dead tokens are refused before they are counted: no entry at all
      for (let i = 0; i < 50; i++) expect((await rotated.request('GET', '/api/org', { token: `svc_sa_rotated${i}` })).status).to.equal(401);
      expect(rotated.built.rateCounter!.size).to.be.at.most(maxKeys);
      // the signed-in user was dropped from memory meanwhile: the first slice counts anew, then the flush reads the total back
      await me();
      await sliceEnds(rotated);
      expect((await me()).status).to.equal(429);
      expect(rotated.built.rateCounter!.size).to.be.at.most(maxKeys);
    } finally {
      await rotated.close();
    }
  });

  it('holds the limit on its own while the database does not take its counts, and says so once in the log', async () => {
    const raw: string[] = [];
    const logger = createLineLogger({ level: 'warn' }, { write: (line: string) => raw.push(line) });
    const alone = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT), ...MANUAL_SLICES }, logger });
    try {
      const user = await createUser(alone);
      const me = () => alone.request('GET', '/api/user', { cookie: user.cookie });
      await alone.db.schema.renameTable('rate_limit_counters', 'rate_limit_counters_away');
      expect((await me()).status).to.equal(200);
      await sliceEnds(alone);
      expect((await me()).status).to.equal(200);
      await sliceEnds(alone);
      expect(await statuses(2, me)).to.deep.equal([200, 429]);
      const warnings = raw.map((line) => JSON.parse(line) as { msg: string }).filter((line) => line.msg.startsWith('could not share rate-limit counts'));
      expect(warnings).to.have.length(1);
      await alone.db.schema.renameTable('rate_limit_counters_away', 'rate_limit_counters');
    } finally {
      await alone.close();
    }
  });

  it('forgets the counters of callers gone quiet for a whole window', async () => {
    const quiet = await createUser(app);
    const active = await createUser(app);
    await app.request('GET', '/api/user', { cookie: quiet.cookie });
    await sliceEnds(app);
    app.clock.advance(120_000);
    await app.request('GET', '/api/user', { cookie: active.cookie });
    // the first flush of a window forgets the rows of the windows before the last
    await sliceEnds(app);
    expect(await app.count('rate_limit_counters')).to.equal(1);
  });

  it('defaults to 600 a minute, off under NODE_ENV=test unless set; 0 turns it off', () => {
    const secrets = { SECRET_KEY: 'x'.repeat(32), JWT_SECRET: 'y'.repeat(32) };
    expect(DEFAULT_RATE_LIMIT_PER_MINUTE).to.equal(600);
    expect(loadConfig({ ...secrets, NODE_ENV: 'production' }).rateLimitPerMinute).to.equal(600);
    expect(loadConfig({ ...secrets, NODE_ENV: 'test' }).rateLimitPerMinute).to.equal(0);
    expect(loadConfig({ ...secrets, NODE_ENV: 'test', RATE_LIMIT_PER_MINUTE: '0' }).rateLimitPerMinute).to.equal(0);
    expect(() => loadConfig({ ...secrets, RATE_LIMIT_PER_MINUTE: '-1' })).to.throw(/RATE_LIMIT_PER_MINUTE must be at least 0/);
    expect(loadConfig({ ...secrets, NODE_ENV: 'production' }).rateLimitSyncMs).to.equal(250);
    expect(loadConfig({ ...secrets, NODE_ENV: 'production' }).rateLimitMaxKeys).to.equal(100_000);
    expect(() => loadConfig({ ...secrets, RATE_LIMIT_SYNC_MS: '5' })).to.throw(/RATE_LIMIT_SYNC_MS must be at least 10/);
    expect(() => loadConfig({ ...secrets, RATE_LIMIT_SYNC_MS: '60001' })).to.throw(/RATE_LIMIT_SYNC_MS must be at most 60000/);
    expect(() => loadConfig({ ...secrets, RATE_LIMIT_MAX_KEYS: '99' })).to.throw(/RATE_LIMIT_MAX_KEYS must be at least 100/);
  });
});
