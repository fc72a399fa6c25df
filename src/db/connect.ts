/**
 * Boot waits for the database: a database that starts with or after the service (a container
 * restart, a failover) is no reason to exit. Retries with a growing pause, each failure logged,
 * until the database answers or the time allowed has passed.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';

const FIRST_PAUSE_MS = 250;
const LONGEST_PAUSE_MS = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitForDatabase(db: Knex, timeoutMs: number, logger: Logger): Promise<void> {
  const giveUpAt = Date.now() + timeoutMs;
  for (let attempt = 1, pause = FIRST_PAUSE_MS; ; attempt++, pause = Math.min(pause * 2, LONGEST_PAUSE_MS)) {
    try {
      await db.raw('select 1');
      if (attempt > 1) logger.info({ attempt }, 'database reachable');
      return;
    } catch (err) {
      const left = giveUpAt - Date.now();
      const reason = (err as { code?: string; message?: string }).code ?? (err as Error).message;
      if (left <= 0) {
        throw new Error(`database unreachable after ${attempt} attempts in ${timeoutMs} ms (DB_CONNECT_TIMEOUT_MS): ${reason}`, { cause: err });
      }
      const wait = Math.min(pause, left);
      logger.warn({ attempt, reason, retryInMs: wait }, 'database unreachable; retrying');
      await sleep(wait);
    }
  }
}
