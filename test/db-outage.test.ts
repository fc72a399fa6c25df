import net from 'node:net';
import { expect } from 'chai';
import pino from 'pino';
import { startServices } from '../src/startup.ts';
import { createUser } from './helpers/factories.ts';
import { createTestDatabase, startTestApp, TEST_DB, testConfig, type Database, type TestApp } from './helpers/app.ts';

/** A TCP proxy in front of MariaDB that the test closes (refusing and cutting every connection) and reopens. */
class DatabaseProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly upstreamPort: number) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.upstreamPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
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

(TEST_DB === 'mysql' ? describe : describe.skip)('the database unreachable (MariaDB behind a proxy the test cuts)', () => {
  let database: Database;
  let proxy: DatabaseProxy;
  before(async () => {
    database = await createTestDatabase();
    proxy = new DatabaseProxy(Number(new URL(database.url).port || 3306));
    await proxy.open();
  });
  after(async () => {
    await proxy.close();
    await database.drop();
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
        services.engine.stopRevisionPoll();
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
