/**
 * The knex factory: embedded SQLite by default, MySQL/MariaDB when DATABASE_URL is a mysql URL.
 */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import { boundQueries, DEFAULT_QUERY_TIMEOUT_MS, type DriverConnection } from './query-timeout.ts';

export type Dialect = 'sqlite' | 'mysql';

export function dialectOf(db: Knex): Dialect {
  return db.client.config.client === 'mysql2' ? 'mysql' : 'sqlite';
}

export function isMysqlUrl(url: string | null): boolean {
  return !!url && /^mysql2?:\/\//i.test(url);
}

interface SqliteConnection {
  pragma(sql: string): unknown;
  prepare(sql: string): unknown;
}

/** How many distinct statements one SQLite connection keeps prepared. */
const MAX_PREPARED_STATEMENTS = 1000;

/**
 * knex prepares every query anew, and on SQLite preparing costs more than running most of our
 * queries: the connection keeps its statements by SQL text (the bindings vary, the text does
 * not). knex runs each statement to its end at once (all() or run()), so one is never in use
 * twice; SQLite prepares a statement again by itself after a schema change.
 */
function reusePreparedStatements(conn: SqliteConnection): void {
  const prepared = new LRUCache<string, object>({ max: MAX_PREPARED_STATEMENTS });
  const prepare = conn.prepare.bind(conn);
  conn.prepare = (sql) => {
    let statement = prepared.get(sql);
    if (!statement) {
      statement = prepare(sql) as object;
      prepared.set(sql, statement);
    }
    return statement;
  };
}

/** The SQLite file the configuration names (DATABASE_URL `sqlite:<file>`, else the one under DATA_DIR); null for MySQL. */
export function sqliteFileOf(config: Pick<Config, 'databaseUrl' | 'sqliteFile'>): string | null {
  if (isMysqlUrl(config.databaseUrl)) return null;
  return config.databaseUrl?.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length).replace(/^\/\//, '') : config.sqliteFile;
}

/** How long a request may wait for a pooled connection while every one is busy (knex's own default). */
const ACQUIRE_TIMEOUT_MS = 60_000;

/** InnoDB's row-lock wait, in whole seconds: ended by the database a second before the query bound (at least 1 s). */
function lockWaitSeconds(queryTimeoutMs: number): number {
  return Math.max(1, Math.ceil(queryTimeoutMs / 1000) - 1);
}

export function createDb(config: Pick<Config, 'databaseUrl' | 'sqliteFile'> & Partial<Pick<Config, 'dbQueryTimeoutMs'>>): Knex {
  const queryTimeoutMs = config.dbQueryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  if (isMysqlUrl(config.databaseUrl)) {
    const url = new URL(config.databaseUrl!);
    return knexFactory({
      client: 'mysql2',
      connection: {
        host: url.hostname,
        port: url.port ? Number(url.port) : 3306,
        user: decodeURIComponent(url.username),
        password: decodeURIComponent(url.password),
        database: url.pathname.replace(/^\//, ''),
        charset: 'utf8mb4',
        // Timestamps are stored as epoch milliseconds (BIGINT); return them as numbers.
        supportBigNumbers: true,
        bigNumberStrings: false,
        // a new connection through a network that swallows packets gives up as a query would
        connectTimeout: queryTimeoutMs,
      },
      pool: {
        min: 0,
        max: 10,
        afterCreate(conn: DriverConnection, done: (err: Error | null, conn: unknown) => void) {
          boundQueries(conn, queryTimeoutMs);
          // A statement waiting for another transaction's row lock is load, not a dead network: the
          // database ends the wait first (ER_LOCK_WAIT_TIMEOUT, which transact() retries), so the
          // bound above only ever fires on a database that stopped answering.
          conn.query(`SET SESSION innodb_lock_wait_timeout = ${lockWaitSeconds(queryTimeoutMs)}`, (err: Error | null) => done(err, conn));
        },
      },
      // A request waiting for a pooled connection is load too. The network's failures still end it
      // within the bound: a stuck connection is destroyed at the query bound, and a new one that
      // cannot connect (connectTimeout) fails the first waiter (knex's propagateCreateError).
      acquireConnectionTimeout: Math.max(ACQUIRE_TIMEOUT_MS, queryTimeoutMs),
    });
  }
  const file = sqliteFileOf(config)!;
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  return knexFactory({
    client: 'better-sqlite3',
    connection: { filename: file },
    useNullAsDefault: true,
    pool: {
      // One connection: SQLite serialises writers anyway, and one connection makes every
      // transaction strictly serial, which the setup race and the quota checks rely on.
      min: 1,
      max: 1,
      afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) {
        conn.pragma('journal_mode = WAL');
        conn.pragma('foreign_keys = ON');
        // the bound of a statement here: how long it waits for another connection's write lock
        conn.pragma(`busy_timeout = ${queryTimeoutMs}`);
        reusePreparedStatements(conn);
        done(null, conn);
      },
    },
  });
}
