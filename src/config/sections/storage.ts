/** The variables of the database, the data directory and what is kept there. */
import path from 'node:path';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../../db/query-timeout.ts';
import { filePath, integer } from '../kinds.ts';
import { databaseUrl } from '../special.ts';
import { Derived } from '../variable.ts';

/** DATA_DIR: read before the rest, which may keep files there. */
export const dataDir = filePath('DATA_DIR', {
  default: 'data',
  defaultText: '`./data`',
  trim: false,
  meaning:
    'where the embedded SQLite file and generated development secrets live; created if missing; not writable (when it is used) is a configuration error (exit 2)',
});

export const storage = {
  databaseUrl: databaseUrl(
    'DATABASE_URL',
    '`mysql://user:pass@host:3306/db` selects MySQL/MariaDB; `sqlite:/path/file.sqlite` a given SQLite file; unset = `$DATA_DIR/gatehouse.sqlite`; any other scheme is a configuration error (exit 2). The settings show it without its password',
  ),
  dataDir,
  /** The embedded SQLite file, used when DATABASE_URL is unset. */
  sqliteFile: new Derived(({ dataDir }) => path.join(dataDir, 'gatehouse.sqlite')),
  dbConnectTimeoutMs: integer('DB_CONNECT_TIMEOUT_MS', {
    default: 60_000,
    min: 0,
    meaning:
      'how long boot waits for the database to answer, retrying with a growing pause (up to 5 s) and logging each failure, before it exits; while running, an unreachable database makes requests answer 503 `{"message":"database unavailable"}` with `Retry-After`, and the service recovers by itself when the database is back',
  }),
  dbQueryTimeoutMs: integer('DB_QUERY_TIMEOUT_MS', {
    default: DEFAULT_QUERY_TIMEOUT_MS,
    min: 1,
    meaning:
      "the bound of every query (transactions' statements included); past it the request answers 503 `{\"message\":\"database unavailable\"}` with `Retry-After`, and on MySQL/MariaDB the query's connection is closed, never reused, so the service recovers by itself when the network heals. A wait for another transaction's row lock is ended by MariaDB a second earlier (`innodb_lock_wait_timeout`) and the transaction is run again, and a wait for a pooled connection may take up to 60 s: both are load, not an outage. On SQLite, whose statements run in the process and cannot be interrupted, it is how long a statement waits for another connection's write lock (`busy_timeout`). Boot's migrations and seeding are not bounded by it",
  }),
  auditRetentionDays: integer('AUDIT_RETENTION_DAYS', { default: 90, min: 1, meaning: 'audit entries older than this are pruned at boot and daily' }),
};
