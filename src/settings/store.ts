/** Key/value settings of the installation (setup state, platform settings), JSON-encoded. */
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';

export async function readSetting<T>(db: Knex, key: string): Promise<T | null> {
  const row: { value: string } | undefined = await db('settings').where('key', key).first('value');
  return row ? (JSON.parse(row.value) as T) : null;
}

export async function writeSetting(db: Knex, key: string, value: unknown, now: number): Promise<void> {
  await db('settings')
    .insert({ key, value: JSON.stringify(value), updated_at: now })
    .onConflict('key')
    .merge(['value', 'updated_at']);
}

/** Writes a setting unless it exists already (the first of several instances booting at once wins). */
export async function insertSettingIfAbsent(db: Knex, key: string, value: unknown, now: number): Promise<void> {
  await db('settings')
    .insert({ key, value: JSON.stringify(value), updated_at: now })
    .onConflict('key')
    .ignore();
}

/** Makes sure a lock row exists (at boot, before anything contends for it). */
export async function ensureLockRow(db: Knex, key: string, now: number): Promise<void> {
  await insertSettingIfAbsent(db, key, null, now);
}

/**
 * Takes the lock of a settings key until the transaction ends, so that check-then-act sequences
 * on it (the first-admin creation, boot's seeding) run one at a time across connections and
 * instances. Call it first in the transaction. MySQL/MariaDB: the row's lock. SQLite: a write
 * that changes nothing, which takes the database's write lock at once (waiting, within the
 * busy timeout, for another connection's, such as another instance's on the same file): a
 * transaction that read first could not take it once another connection had written.
 */
export async function lockSetting(trx: Knex.Transaction, key: string): Promise<void> {
  if (dialectOf(trx) === 'sqlite') await trx('settings').where('key', key).update({ key });
  else await trx('settings').where('key', key).forUpdate().first('key');
}
