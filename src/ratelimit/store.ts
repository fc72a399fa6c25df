/**
 * The general rate limit's counters: one row per caller holding the start of its current fixed
 * window (a minute) and the requests counted in it, in the database so every instance adds to the
 * same count. Each request is one atomic upsert that either adds one in the current window or, the
 * first time a later window is seen, starts it over at 1, and returns the count it produced: of
 * any number of concurrent requests each gets a distinct count, so exactly the first `limit` pass.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';

export const RATE_LIMIT_WINDOW_MS = 60_000;

export const windowStartOf = (now: number): number => now - (now % RATE_LIMIT_WINDOW_MS);

/** Counts one request of `key` in the window holding `now`; returns the requests counted in that window so far, this one included. */
export async function countRequest(db: Knex, key: string, now: number): Promise<number> {
  const windowStart = windowStartOf(now);
  if (dialectOf(db) === 'mysql') {
    // MySQL has no RETURNING: LAST_INSERT_ID(expr) hands the updated count back in the statement's
    // own result (per connection, so no other request's count). A fresh row (1 affected) counts 1.
    // Assignments run left to right here, so `hits` reads the old window_start.
    const [result] = (await db.raw(
      `INSERT INTO rate_limit_counters (\`key\`, window_start, hits) VALUES (?, ?, 1)
       ON DUPLICATE KEY UPDATE hits = LAST_INSERT_ID(IF(VALUES(window_start) > window_start, 1, hits + 1)),
                               window_start = GREATEST(window_start, VALUES(window_start))`,
      [key, windowStart],
    )) as [{ affectedRows: number; insertId: number }];
    return result.affectedRows === 1 ? 1 : Number(result.insertId);
  }
  const rows = (await db.raw(
    `INSERT INTO rate_limit_counters (key, window_start, hits) VALUES (?, ?, 1)
     ON CONFLICT (key) DO UPDATE SET hits = CASE WHEN excluded.window_start > window_start THEN 1 ELSE hits + 1 END,
                                     window_start = MAX(window_start, excluded.window_start)
     RETURNING hits`,
    [key, windowStart],
  )) as Array<{ hits: number }>;
  return Number(rows[0]!.hits);
}

/** Forgets the counters of callers not seen since the window before `now`'s: they would start over anyway. */
export async function deleteStaleCounters(db: Knex, now: number): Promise<number> {
  return db('rate_limit_counters')
    .where('window_start', '<', windowStartOf(now) - RATE_LIMIT_WINDOW_MS)
    .delete();
}
