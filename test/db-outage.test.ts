import net from 'node:net';
import { expect } from 'chai';
import pino from 'pino';
import { createDb } from '../src/db/knex.ts';
import { startServices } from '../src/startup.ts';
import { buildRole, createUser } from './helpers/factories.ts';
import { createTestDatabase, startTestApp, testConfig, type Database, type TestApp } from './helpers/app.ts';
import { requireDatabase } from './helpers/peers.ts';

/**
 * A TCP proxy in front of MariaDB that the test closes (refusing and cutting every connection) and
 * reopens, or turns into a black hole: it accepts and forwards nothing, as a network that drops
 * every packet. Connections swallowed by the black hole stay swallowed when it heals (their bytes
 * are gone); new ones are forwarded again.
 */
class DatabaseProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private readonly forwarding = new Set<{ client: net.Socket; upstream: net.Socket }>();
  private swallowing = false;
  port = 0;

  constructor(private readonly upstreamPort: number) {}

  private track(...sockets: net.Socket[]): void {
    for (const socket of sockets) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => {
        for (const other of sockets) other.destroy();
      });
    }
  }

  /** Reads whatever `socket` sends and drops it. */
  private static swallow(socket: net.Socket): void {
    socket.on('data', () => {});
    socket.resume();
  }

  /** From now on nothing passes, on the open connections and on new ones. */
  blackhole(): void {
    this.swallowing = true;
    for (const pair of this.forwarding) {
      pair.client.unpipe(pair.upstream);
      pair.upstream.unpipe(pair.client);
      DatabaseProxy.swallow(pair.client);
      DatabaseProxy.swallow(pair.upstream);
    }
    this.forwarding.clear();
  }

  /** New connections are forwarded again. */
  heal(): void {
    this.swallowing = false;
  }

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      if (this.swallowing) {
        this.track(client);
        DatabaseProxy.swallow(client);
        return;
      }
      const upstream = net.connect(this.upstreamPort, '127.0.0.1');
      this.track(client, upstream);
      const pair = { client, upstream };
      this.forwarding.add(pair);
      client.on('close', () => this.forwarding.delete(pair));
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.swallowing = false;
    this.forwarding.clear();
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** The database's URL through the proxy. */
  urlOf(database: Database): string {
    const url = new URL(database.url);
    url.port = String(this.port);
    return url.toString();
  }
}

/** A logger whose warnings the test reads. */
function recordingLogger() {
  const lines: Array<{ msg: string; attempt?: number }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('the database unreachable (MariaDB behind a proxy the test cuts)', () => {
  let database: Database;
  let proxy: DatabaseProxy;
  before(async function () {
    requireDatabase(this, 'mysql');
    database = await createTestDatabase();
    proxy = new DatabaseProxy(Number(new URL(database.url).port || 3306));
    await proxy.open();
  });
  after(async () => {
    await proxy?.close();
    await database?.drop();
  });

  describe('while serving', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database: { url: proxy.urlOf(database), drop: async () => {} } });
    });
    after(async () => {
      await app.close();
    });

    it('answers 503 {message} with Retry-After while the database is gone, and recovers by itself', async () => {
      const user = await createUser(app);
      expect((await app.request('GET', '/api/user', { cookie: user.cookie })).status).to.equal(200);

      await proxy.close();
      // what the instance read of the caller in the last PRINCIPAL_CACHE_TTL_MS is not read again
      app.clock.advance(app.services.config.principalCacheTtlMs);
      for (const [method, path] of [
        ['GET', '/api/user'],
        ['GET', '/api/orgs'],
        ['POST', '/api/orgs'],
      ] as const) {
        const res = await app.request(method, path, { cookie: user.cookie, body: method === 'POST' ? { name: 'during-outage' } : undefined });
        expect(res.status, `${method} ${path}`).to.equal(503);
        expect(res.body).to.deep.equal({ message: 'database unavailable' });
        expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
      }

      await proxy.open();
      const back = await app.request('GET', '/api/user', { cookie: user.cookie });
      expect(back.status).to.equal(200);
      expect(back.body.login).to.equal(user.login);
    });
  });

  describe('a database that stops answering (DB_QUERY_TIMEOUT_MS)', () => {
    const TIMEOUT_MS = 1000;
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database: { url: proxy.urlOf(database), drop: async () => {} }, env: { DB_QUERY_TIMEOUT_MS: String(TIMEOUT_MS) } });
    });
    after(async () => {
      await app.close();
    });

    /** The request, and how long its answer took. */
    async function timed(method: string, path: string, options: Parameters<TestApp['request']>[2]) {
      const started = Date.now();
      const res = await app.request(method, path, options);
      return { res, ms: Date.now() - started };
    }

    it('answers 503 {message} with Retry-After within about the bound, writes and reads alike, and recovers when the network heals', async function () {
      this.timeout(60_000);
      const user = await createUser(app, { svcAdmin: true });
      expect((await app.request('POST', '/api/orgs', { cookie: user.cookie, body: { name: 'before-the-void' } })).status).to.equal(201);

      // the network goes in the middle of a transaction: its next statement gets no answer
      const started = Date.now();
      const failure = await app.services
        .transact(async (tx) => {
          await tx.db('orgs').count({ n: '*' });
          proxy.blackhole();
          await tx.db('orgs').where('name', 'before-the-void').update({ name: 'inside-the-void' });
        })
        .catch((err: { code?: string }) => err);
      expect(failure).to.have.property('code', 'DB_QUERY_TIMEOUT');
      expect(Date.now() - started).to.be.within(TIMEOUT_MS - 100, TIMEOUT_MS + 1500);

      const write = await timed('POST', '/api/orgs', { cookie: user.cookie, body: { name: 'into-the-void' } });
      app.clock.advance(app.services.config.principalCacheTtlMs);
      const read = await timed('GET', '/api/user', { cookie: user.cookie });
      // more requests at once than the pool has connections: each answers within the bound, a
      // pooled connection's query or a new connection's opening
      const burst = await Promise.all(Array.from({ length: 12 }, () => timed('GET', '/api/orgs', { cookie: user.cookie })));
      for (const { res, ms } of [write, read, ...burst]) {
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.equal({ message: 'database unavailable' });
        expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
        expect(ms).to.be.within(TIMEOUT_MS - 100, 2 * TIMEOUT_MS + 1500);
      }

      proxy.heal();
      // no connection stuck behind the black hole is used again: every request succeeds
      for (let i = 0; i < 15; i++) {
        app.clock.advance(app.services.config.principalCacheTtlMs);
        const { res, ms } = await timed('GET', '/api/user', { cookie: user.cookie });
        expect(res.status, `request ${i} after healing: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(ms).to.be.lessThan(TIMEOUT_MS);
      }
      const again = await app.request('POST', '/api/orgs', { cookie: user.cookie, body: { name: 'after-the-void' } });
      expect(again.status, JSON.stringify(again.body)).to.equal(201);
      // the writes that got no answer did not happen
      expect(await app.count('orgs', { name: 'into-the-void' })).to.equal(0);
      expect(await app.count('orgs', { name: 'before-the-void' })).to.equal(1);
    });
  });

  describe('at boot', () => {
    it('waits for the database with logged retries, and starts once it answers', async () => {
      await proxy.close();
      const { logger, lines } = recordingLogger();
      const starting = startServices(testConfig(proxy.urlOf(database), { DB_CONNECT_TIMEOUT_MS: '60000' }), logger);
      while (lines.filter((line) => line.msg === 'database unreachable; retrying').length < 2) await new Promise((resolve) => setTimeout(resolve, 50));
      await proxy.open();
      const services = await starting;
      try {
        expect(lines.some((line) => line.msg === 'database reachable' && line.attempt! >= 3)).to.be.true;
      } finally {
        services.engine.stopChangePoll();
        await services.db.destroy();
      }
    });

    it('gives up after DB_CONNECT_TIMEOUT_MS with a message naming it', async () => {
      await proxy.close();
      const { logger, lines } = recordingLogger();
      const failure = await startServices(testConfig(proxy.urlOf(database), { DB_CONNECT_TIMEOUT_MS: '600' }), logger).catch((err: Error) => err);
      await proxy.open();
      expect(failure).to.be.instanceOf(Error);
      expect((failure as Error).message).to.match(/^database unreachable after \d+ attempts in 600 ms \(DB_CONNECT_TIMEOUT_MS\): ECONNREFUSED/);
      expect(lines.filter((line) => line.msg === 'database unreachable; retrying').length).to.be.greaterThan(0);
    });
  });
});

// SQLite runs in the process: no network can swallow its answers, and a statement that has begun
// cannot be interrupted. What can keep a request waiting is another connection's write lock
// (another instance on the same file), and DB_QUERY_TIMEOUT_MS bounds that wait.
describe('SQLite: a write waiting for another connection’s write lock', () => {
  const TIMEOUT_MS = 1000;
  let app: TestApp;
  before(async function () {
    requireDatabase(this, 'sqlite');
    app = await startTestApp({ env: { DB_QUERY_TIMEOUT_MS: String(TIMEOUT_MS) } });
  });
  after(async () => {
    await app?.close();
  });

  it('answers 503 {message} with Retry-After once DB_QUERY_TIMEOUT_MS has passed, and writes again when the lock is gone', async () => {
    const admin = await createUser(app, { svcAdmin: true, role: 'Admin' });
    const other = createDb({ databaseUrl: app.services.config.databaseUrl, sqliteFile: '' });
    try {
      await other.raw('BEGIN IMMEDIATE');
      const started = Date.now();
      const res = await app.request('POST', '/api/access-control/roles', { cookie: admin.cookie, body: buildRole() });
      const ms = Date.now() - started;
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body).to.deep.equal({ message: 'database unavailable' });
      expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(ms).to.be.within(TIMEOUT_MS - 100, TIMEOUT_MS + 1500);
      await other.raw('ROLLBACK');
    } finally {
      await other.destroy();
    }
    const res = await app.request('POST', '/api/access-control/roles', { cookie: admin.cookie, body: buildRole() });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  });
});
