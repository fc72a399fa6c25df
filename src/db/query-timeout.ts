/**
 * Every query has a bound (DB_QUERY_TIMEOUT_MS): a database that stops answering (a network
 * partition, a proxy that accepts and forwards nothing) must not hold a request for minutes.
 *
 * MySQL/MariaDB: past the bound the query fails as the database being unavailable (503 with
 * Retry-After, src/db/errors.ts) and its connection is destroyed: its answer may still come, or
 * never, and a connection in that state is never handed out again (the pool drops a closed one).
 * Every statement is bounded alike: BEGIN, COMMIT and ROLLBACK, raw queries, those of a transaction.
 * SQLite's statements run synchronously in the process and cannot be interrupted: there the bound
 * is the busy timeout, how long a statement waits for another connection's write lock
 * (src/db/knex.ts).
 *
 * Boot's migrations and seeding run without the bound (withoutQueryTimeout): a schema change on
 * a large table may take minutes, and an instance may wait for another's seeding.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** DB_QUERY_TIMEOUT_MS by default, and where no configuration gives one (tools and tests that open a database themselves). */
export const DEFAULT_QUERY_TIMEOUT_MS = 5_000;

/** The code of a query that got no answer in time; src/db/errors.ts counts it as unavailable. */
export const QUERY_TIMEOUT_CODE = 'DB_QUERY_TIMEOUT';

export class QueryTimeoutError extends Error {
  readonly code = QUERY_TIMEOUT_CODE;
}

const unbounded = new AsyncLocalStorage<true>();
let unboundedRuns = 0;

/**
 * Runs `work` with its queries unbounded: boot's migrations and seeding. The storage is turned off
 * once no such work runs: while one is on, Node tracks the context of every promise of the
 * process, a cost every request would pay.
 */
export async function withoutQueryTimeout<T>(work: () => Promise<T>): Promise<T> {
  unboundedRuns++;
  try {
    return await unbounded.run(true, work);
  } finally {
    if (--unboundedRuns === 0) unbounded.disable();
  }
}

/** What the bound needs of a mysql2 connection. */
export interface DriverConnection {
  query(...args: unknown[]): unknown;
  destroy(): void;
  stream?: { destroy(): void };
}

type Callback = (err: Error | null, ...results: unknown[]) => void;

/**
 * Bounds every query of a new mysql2 connection by `timeoutMs` (the pool's afterCreate). The
 * connection's own `query` is wrapped, so knex's runner, its transactions (which bypass the
 * client object) and raw queries all pass through it.
 */
export function boundQueries(connection: DriverConnection, timeoutMs: number): void {
  const query = connection.query.bind(connection);
  connection.query = (...args: unknown[]) => {
    const callback = args.at(-1);
    if (typeof callback !== 'function' || unbounded.getStore()) return query(...args);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      const timeout = () => new QueryTimeoutError(`the database did not answer within ${timeoutMs} ms (DB_QUERY_TIMEOUT_MS)`);
      // closes the socket now: a FIN would wait on a peer that may never answer
      connection.destroy();
      connection.stream?.destroy();
      // what the caller sends after (its transaction's ROLLBACK) fails the same way
      connection.query = (...later: unknown[]) => {
        const answer = later.at(-1);
        if (typeof answer === 'function') process.nextTick(() => (answer as Callback)(timeout()));
      };
      (callback as Callback)(timeout());
    }, timeoutMs);
    return query(...args.slice(0, -1), (err: Error | null, ...results: unknown[]) => {
      if (timedOut) return;
      clearTimeout(timer);
      (callback as Callback)(err, ...results);
    });
  };
}
