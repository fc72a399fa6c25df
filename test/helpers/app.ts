/**
 * A real server on an ephemeral port over a fresh database: a temporary SQLite file, or a new
 * MariaDB/MySQL database when TEST_DB=mysql (TEST_MYSQL_URL, default mysql://root@127.0.0.1:3306).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import knexFactory from 'knex';
import pino, { type Logger } from 'pino';
import { buildApp, type BuiltApp } from '../../src/app.ts';
import { bootstrap } from '../../src/bootstrap.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Clock, Services } from '../../src/services.ts';
import { createServer, listen } from '../../src/http/server.ts';
import { createDb } from '../../src/db/knex.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { startServices } from '../../src/startup.ts';

export const TEST_DB = process.env.TEST_DB === 'mysql' ? 'mysql' : 'sqlite';
const MYSQL_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';

/** A clock the tests move by hand; nothing in the suite sleeps. */
export class TestClock implements Clock {
  constructor(public current = Date.parse('2026-11-21T12:00:00Z')) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export interface Database {
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<Database> {
  if (TEST_DB === 'mysql') {
    const name = `gatehouse_test_${randomBytes(6).toString('hex')}`;
    const admin = knexFactory({ client: 'mysql2', connection: MYSQL_URL });
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    await admin.destroy();
    return {
      url: `${MYSQL_URL}/${name}`,
      async drop() {
        const dropper = knexFactory({ client: 'mysql2', connection: MYSQL_URL });
        await dropper.raw(`DROP DATABASE IF EXISTS \`${name}\``);
        await dropper.destroy();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-'));
  return {
    url: `sqlite:${path.join(dir, 'test.sqlite')}`,
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh database already at the latest schema: a copy of a template migrated once (the app's
 * boot then finds no migration left). Migrating costs 0.2 s on SQLite and 1–2 s on MariaDB per
 * app, hundreds of times in the suite; a copy costs a file copy, or one batch of statements.
 * Tests of the migrations themselves use createTestDatabase(): an empty database.
 */
export async function createMigratedTestDatabase(): Promise<Database> {
  const template = await (migratedTemplate ??= TEST_DB === 'mysql' ? mysqlTemplate() : sqliteTemplate());
  const database = await createTestDatabase();
  try {
    await template.copyInto(database.url);
  } catch (err) {
    await database.drop();
    throw err;
  }
  return database;
}

interface Template {
  copyInto(url: string): Promise<void>;
}
let migratedTemplate: Promise<Template> | undefined;

/** This process's migrated SQLite file, removed when the process exits. */
async function sqliteTemplate(): Promise<Template> {
  const database = await createTestDatabase();
  const file = database.url.slice('sqlite:'.length);
  process.once('exit', () => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  const db = createDb(testConfig(database.url));
  try {
    await migrateToLatest(db);
  } finally {
    // closing checkpoints the write-ahead log into the file that is copied
    await db.destroy();
  }
  return { copyInto: async (url) => fs.copyFileSync(file, url.slice('sqlite:'.length)) };
}

/**
 * A MariaDB database migrated once for each set of migrations (named by their hash, so workers
 * and runs of the same code share it, and a change to a migration makes another), made under a
 * lock so parallel workers wait for the first. Its tables, foreign keys included, and rows are
 * copied into each test database.
 */
async function mysqlTemplate(): Promise<Template> {
  const hash = createHash('sha256');
  for (const file of fs.readdirSync(MIGRATIONS_DIR).sort()) hash.update(file).update(fs.readFileSync(path.join(MIGRATIONS_DIR, file)));
  const name = `gatehouse_template_${hash.digest('hex').slice(0, 16)}`;
  const session = knexFactory({ client: 'mysql2', connection: MYSQL_URL, pool: { min: 1, max: 1 } });
  try {
    await session.raw('SELECT GET_LOCK(?, 300)', [TEMPLATE_LOCK]);
    const [ready] = (await session.raw('SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?', [name, TEMPLATE_MARK])) as [
      unknown[],
    ];
    if (ready.length === 0) {
      await session.raw('DROP DATABASE IF EXISTS ??', [name]);
      await session.raw('CREATE DATABASE ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', [name]);
      const db = createDb(testConfig(`${MYSQL_URL}/${name}`));
      try {
        await migrateToLatest(db);
      } finally {
        await db.destroy();
      }
      await session.raw('CREATE TABLE ??.?? (id INT)', [name, TEMPLATE_MARK]);
    }
    const [tables] = (await session.raw('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_name <> ?', [
      name,
      TEMPLATE_MARK,
    ])) as [Array<{ name: string }>];
    const creates: string[] = [];
    for (const table of tables) {
      const [[row]] = (await session.raw('SHOW CREATE TABLE ??.??', [name, table.name])) as [Array<{ 'Create Table': string }>];
      creates.push(row!['Create Table']);
    }
    return {
      async copyInto(url) {
        const copier = knexFactory({ client: 'mysql2', connection: `${url}?multipleStatements=true` });
        try {
          await copier.raw(
            [
              'SET FOREIGN_KEY_CHECKS = 0',
              ...creates,
              ...tables.map((table) => `INSERT INTO \`${table.name}\` SELECT * FROM \`${name}\`.\`${table.name}\``),
              'SET FOREIGN_KEY_CHECKS = 1',
            ].join(';\n'),
          );
        } finally {
          await copier.destroy();
        }
      },
    };
  } finally {
    await session.raw('SELECT RELEASE_LOCK(?)', [TEMPLATE_LOCK]).catch(() => {});
    await session.destroy();
  }
}

const MIGRATIONS_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../migrations');
const TEMPLATE_LOCK = 'gatehouse-test-template';
const TEMPLATE_MARK = 'template_ready';

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Headers;
  cookies: Record<string, string>;
  setCookie: string[];
}

/** Keeps the svc_session cookie up to date across requests, as a browser does (rotation, logout). */
export class CookieJar {
  constructor(public cookie = '') {}

  absorb(setCookie: string[]): void {
    const session = setCookie.find((c) => c.startsWith('svc_session='));
    if (!session) return;
    const value = session.split(';')[0]!.slice('svc_session='.length);
    this.cookie = value ? `svc_session=${value}` : '';
  }
}

export interface RequestOptions {
  jar?: CookieJar;
  body?: unknown;
  /** A raw body sent as is (with `contentType`), for malformed-input tests. */
  rawBody?: string;
  contentType?: string;
  cookie?: string;
  token?: string;
  headers?: Record<string, string>;
}

export class TestApp {
  constructor(
    readonly url: string,
    readonly services: Services,
    readonly built: BuiltApp,
    readonly clock: TestClock,
    private readonly server: Server,
    private readonly database: Database,
  ) {}

  get db() {
    return this.services.db;
  }

  async count(table: string, where: Record<string, unknown> = {}): Promise<number> {
    const [row] = await this.services.db(table).where(where).count<Array<{ total: number | string }>>({ total: '*' });
    return Number(row?.total ?? 0);
  }

  async request<T = any>(method: string, urlPath: string, options: RequestOptions = {}): Promise<Response<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
      headers['content-type'] = options.contentType ?? 'application/json';
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    const cookie = options.jar?.cookie ?? options.cookie;
    if (cookie) headers.cookie = cookie;
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const response = await fetch(`${this.url}${urlPath}`, { method, headers, body, redirect: 'manual' }).catch((err: Error) => {
      // fetch says only "fetch failed": the reason (a reset, a refusal) is its cause
      const cause = err.cause as NodeJS.ErrnoException | undefined;
      throw new Error(`${method} ${urlPath}: ${err.message}${cause ? ` (${cause.code ?? ''} ${cause.message})` : ''}`, { cause });
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    const setCookie = response.headers.getSetCookie();
    options.jar?.absorb(setCookie);
    const cookies = Object.fromEntries(setCookie.map((c) => c.split(';')[0]!.split('=') as [string, string]));
    return { status: response.status, body: parsed as T, headers: response.headers, cookies, setCookie };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.services.engine.closeDecisionLog();
    this.services.engine.stopChangePoll();
    await this.built.stop();
    await this.services.db.destroy();
    await this.database.drop();
  }
}

/** The SQL statements `app` runs while `work` runs. */
export async function statementsDuring(app: TestApp, work: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const record = (query: { sql: string }) => statements.push(query.sql);
  app.services.db.on('query', record);
  try {
    await work();
  } finally {
    app.services.db.off('query', record);
  }
  return statements;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Reuse an existing database (a second instance, a reboot) instead of a fresh one. */
  database?: Database;
  clock?: TestClock;
  /** The app's logger (default: silent, or TEST_LOG_LEVEL), for tests that read the log. */
  logger?: Logger;
}

export function testConfig(databaseUrl: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    SECRET_KEY: 'test-secret-key-0123456789abcdef0123456789',
    JWT_SECRET: 'test-jwt-secret-0123456789abcdef0123456789',
    AUTHZ_REVISION_POLL_MS: '3600000',
    // every answer the suite receives is checked against its route's declared responses
    RESPONSE_VALIDATION: 'true',
    ...env,
  });
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  // a database the caller brought is the caller's to drop
  if (options.database) return startOn({ url: options.database.url, drop: async () => {} }, options);
  const database = await createMigratedTestDatabase();
  // an app that fails to start (a test of a refused configuration) leaves no database behind
  return startOn(database, options).catch(async (err: unknown) => {
    await database.drop();
    throw err;
  });
}

/** Starts an app on `database`, which TestApp.close() drops. */
async function startOn(database: Database, options: TestAppOptions): Promise<TestApp> {
  const clock = options.clock ?? new TestClock();
  const config = testConfig(database.url, options.env);
  const logger = options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const services = await startServices(config, logger, clock);
  await bootstrap(services);
  const built = buildApp(services);
  const server = createServer(built.app);
  // Only the test client ends an idle connection. With the server's 5 s idle timeout, a test that
  // holds the event loop for seconds (a burst of synchronous SQLite writes) had both sides' idle
  // timers fire in one turn: the server closed a connection as the client sent on it (ECONNRESET).
  server.keepAliveTimeout = 0;
  const { port } = await listen(server, '127.0.0.1', 0);
  return new TestApp(`http://127.0.0.1:${port}`, services, built, clock, server, database);
}
