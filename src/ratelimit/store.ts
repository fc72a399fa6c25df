/**
 * The general rate limit's shared counters: one row per caller (its hashed key) holding the start
 * of its current fixed window (a clock minute) and the requests every instance counted in it.
 * Instances count in memory (src/ratelimit/counter.ts) and add what they counted since their last
 * flush here, many callers in one statement, then read the totals back: a later window seen for a
 * key starts its row over, an earlier one (an instance whose clock lags) adds nothing.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';

export const RATE_LIMIT_WINDOW_MS = 60_000;

export const windowStartOf = (now: number): number => now - (now % RATE_LIMIT_WINDOW_MS);

/** Rows per statement: 3 parameters each, well under SQLite's and MySQL's parameter limits. */
const ROWS_PER_STATEMENT = 500;

export interface CountDelta {
  key: string;
  windowStart: number;
  hits: number;
}

/** A caller's total over every instance, in the window its row holds. */
export interface CounterTotal {
  key: string;
  windowStart: number;
  hits: number;
}

/**
 * Adds `deltas` (one per key) to the shared counters and returns each key's total afterwards: one
 * statement per ROWS_PER_STATEMENT keys on SQLite (an upsert with RETURNING); on MySQL/MariaDB,
 * which has no RETURNING on an upsert, the upsert and then one read of the same keys.
 */
export async function addCounts(db: Knex, deltas: readonly CountDelta[]): Promise<CounterTotal[]> {
  // a fixed order: two instances' statements lock the rows in the same order (InnoDB), never a deadlock
  const sorted = [...deltas].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const totals: CounterTotal[] = [];
  for (let i = 0; i < sorted.length; i += ROWS_PER_STATEMENT) {
    const chunk = sorted.slice(i, i + ROWS_PER_STATEMENT);
    const values = chunk.map(() => '(?, ?, ?)').join(', ');
    const params = chunk.flatMap((delta) => [delta.key, delta.windowStart, delta.hits]);
    if (dialectOf(db) === 'mysql') {
      // Assignments run left to right: `hits` reads the row's old window_start.
      await db.raw(
        `INSERT INTO rate_limit_counters (\`key\`, window_start, hits) VALUES ${values}
         ON DUPLICATE KEY UPDATE hits = IF(VALUES(window_start) > window_start, VALUES(hits), IF(VALUES(window_start) = window_start, hits + VALUES(hits), hits)),
                                 window_start = GREATEST(window_start, VALUES(window_start))`,
        params,
      );
      const [rows] = (await db.raw(
        `SELECT \`key\`, window_start, hits FROM rate_limit_counters WHERE \`key\` IN (${chunk.map(() => '?').join(', ')})`,
        chunk.map((delta) => delta.key),
      )) as [Array<{ key: string; window_start: number | string; hits: number | string }>];
      for (const row of rows) totals.push({ key: row.key, windowStart: Number(row.window_start), hits: Number(row.hits) });
    } else {
      const rows = (await db.raw(
        `INSERT INTO rate_limit_counters (key, window_start, hits) VALUES ${values}
         ON CONFLICT (key) DO UPDATE SET
           hits = CASE WHEN excluded.window_start > window_start THEN excluded.hits
                       WHEN excluded.window_start = window_start THEN hits + excluded.hits ELSE hits END,
           window_start = MAX(window_start, excluded.window_start)
         RETURNING key, window_start, hits`,
        params,
      )) as Array<{ key: string; window_start: number; hits: number }>;
      for (const row of rows) totals.push({ key: row.key, windowStart: Number(row.window_start), hits: Number(row.hits) });
    }
  }
  return totals;
}

/** Forgets the counters of callers not seen since the window before `now`'s: they would start over anyway. */
export async function deleteStaleCounters(db: Knex, now: number): Promise<number> {
  return db('rate_limit_counters')
    .where('window_start', '<', windowStartOf(now) - RATE_LIMIT_WINDOW_MS)
    .delete();
}
