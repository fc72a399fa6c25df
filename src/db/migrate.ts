/**
 * Runs the knex migrations in migrations/ (timestamp-prefixed, up and down) at boot.
 * A custom source imports the TypeScript modules directly, so no build step is needed.
 *
 * Several instances may boot at once on one database: the one that migrates first holds the
 * lock and the others wait for it (bounded, logged), then find nothing left to do.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { dialectOf } from './knex.ts';
import { withoutQueryTimeout } from './query-timeout.ts';

const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

interface MigrationModule {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const source: Knex.MigrationSource<string> = {
  async getMigrations() {
    return fs
      .readdirSync(MIGRATIONS_DIR)
      .filter((file) => /^\d{14}-[a-z0-9-]+\.ts$/.test(file))
      .sort();
  },
  getMigrationName(file) {
    return file;
  },
  async getMigration(file): Promise<MigrationModule> {
    return (await import(pathToFileURL(path.join(MIGRATIONS_DIR, file)).href)) as MigrationModule;
  },
};

/** How long an instance waits for another one's migrations before it gives up. */
const MIGRATION_WAIT_MS = 5 * 60_000;
const WAIT_STEP_SECONDS = 5;
const RETRY_PAUSE_MS = 500;
const MYSQL_LOCK_NAME = 'gatehouse-migrations';

/** Runs the migrations not yet applied; their queries are not bounded by DB_QUERY_TIMEOUT_MS (src/db/query-timeout.ts). */
export function migrateToLatest(db: Knex, logger?: Logger): Promise<void> {
  return withoutQueryTimeout(async () => {
    if (dialectOf(db) === 'mysql') {
      await withMysqlMigrationLock(db, logger, () => migrateWhenUnlocked(db, logger));
    } else {
      await migrateWhenUnlocked(db, logger);
    }
  });
}

/**
 * On MySQL/MariaDB a named lock (GET_LOCK, held by one pinned connection) admits one instance
 * at a time: knex's own lock table is created and filled by the first run, and two runs
 * creating it at once fail ("table exists") or leave two lock rows behind, locked for good.
 */
async function withMysqlMigrationLock(db: Knex, logger: Logger | undefined, migrate: () => Promise<void>): Promise<void> {
  await db.transaction(async (pinned) => {
    const deadline = Date.now() + MIGRATION_WAIT_MS;
    for (;;) {
      const [rows] = (await pinned.raw('SELECT GET_LOCK(?, ?) AS acquired', [MYSQL_LOCK_NAME, WAIT_STEP_SECONDS])) as [Array<{ acquired: number | null }>];
      if (Number(rows[0]?.acquired) === 1) break;
      if (Date.now() >= deadline) throw new Error(`another instance has been migrating the database for over ${MIGRATION_WAIT_MS / 1000} s; giving up`);
      logger?.info('waiting for another instance to finish migrating the database');
    }
    try {
      await migrate();
    } finally {
      await pinned.raw('SELECT RELEASE_LOCK(?)', [MYSQL_LOCK_NAME]);
    }
  });
}

/**
 * Another instance holds knex's lock, or is creating knex's own tables this very moment (on
 * SQLite, where no named lock admits one instance at a time).
 */
function isAnotherInstanceMigrating(err: unknown): boolean {
  const { name, message } = err as Error;
  return name === 'MigrationLocked' || /knex_migrations(_lock)?`? already exists/.test(message ?? '');
}

/** Runs knex's migrations, waiting while another instance is at it. */
async function migrateWhenUnlocked(db: Knex, logger: Logger | undefined): Promise<void> {
  const deadline = Date.now() + MIGRATION_WAIT_MS;
  for (;;) {
    try {
      await db.migrate.latest({ migrationSource: source });
      return;
    } catch (err) {
      if (!isAnotherInstanceMigrating(err)) throw err;
      if (Date.now() >= deadline) {
        throw new Error(
          `the migration lock has been held for over ${MIGRATION_WAIT_MS / 1000} s; if no instance is migrating, a crashed one left it: set is_locked = 0 in knex_migrations_lock`,
          { cause: err },
        );
      }
      logger?.info('another instance is migrating the database; waiting');
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }
}

/** Runs the migrations up to and including the file `name` (a test fills the schema as it was, then migrates on). */
export async function migrateTo(db: Knex, name: string): Promise<void> {
  await db.migrate.to({ migrationSource: source, name });
}

export async function rollbackAll(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource: source }, true);
}

/**
 * The migrations this code has that the database has not run (the readiness check). Migrations
 * the database has and this code lacks are a newer instance's, as in a rolling upgrade: no fault.
 */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const [, pending] = (await db.migrate.list({ migrationSource: source, disableMigrationsListValidation: true })) as [unknown, string[]];
  return pending;
}
