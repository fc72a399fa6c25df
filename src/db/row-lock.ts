/**
 * A write decides on the rows it read: read in its transaction under a lock, they stay as read
 * until the commit, and a concurrent writer of the same rows waits for it (or it for them). A
 * row gone by the time the lock is granted is simply not found: the caller answers 404 (or 409),
 * never acts on a row that is no longer there. On MySQL/MariaDB the lock is InnoDB's row lock
 * (READ COMMITTED: a locking read returns the latest committed row); SQLite runs one writing
 * transaction at a time, so its reads need none.
 */
import type { Knex } from 'knex';
import { dialectOf } from './knex.ts';

/** `update` for the rows a write changes or deletes, `share` for a row a write depends on (the folder something lands in). */
export type RowLock = 'update' | 'share';

/** `query` with its rows locked until the transaction ends (none when `lock` is undefined). */
export function lockRows<T extends Knex.QueryBuilder>(db: Knex, query: T, lock: RowLock | undefined): T {
  if (!lock || dialectOf(db) !== 'mysql') return query;
  return (lock === 'update' ? query.forUpdate() : query.forShare()) as T;
}
