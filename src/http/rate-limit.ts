/**
 * The general rate limit (RATE_LIMIT_PER_MINUTE; 0 turns it off): at most that many requests per
 * minute per API token, per signed-in user (all their sessions together), and per client address
 * for anonymous requests, counted in the database (src/ratelimit/store.ts) so that every instance
 * shares the count. Beyond it: 429 with Retry-After, the seconds until the window ends.
 *
 * It runs after authentication, which tells whose request it is; a request refused there (a dead
 * token, 401) is not counted. Health and metrics are exempt (probes and scrapers must always get
 * through), and so is the password login, which has its own per-account lockout.
 */
import type { Context, Next } from 'koa';
import { sha256Hex } from '../crypto/tokens.ts';
import { TooManyRequestsError } from '../errors.ts';
import type { Principal } from '../principal.ts';
import { countRequest, deleteStaleCounters, RATE_LIMIT_WINDOW_MS, windowStartOf } from '../ratelimit/store.ts';
import type { Services } from '../services.ts';
import { bearerToken } from './authenticate.ts';
import { clientIp } from './client-ip.ts';

export const RATE_LIMIT_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/api/health', '/api/health/ready', '/metrics', '/api/login']);

/** Whose allowance a request takes from: its token, its user, or its address; hashed, as the table stores it. */
function counterKey(ctx: Context): string {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal?.via === 'token') return sha256Hex(`token:${bearerToken(ctx)}`);
  if (principal) return sha256Hex(`user:${principal.user.id}`);
  return sha256Hex(`ip:${clientIp(ctx) ?? 'unknown'}`);
}

export function rateLimit(services: Pick<Services, 'db' | 'clock' | 'config' | 'logger'>) {
  const limit = services.config.rateLimitPerMinute;
  let prunedWindow = 0;
  return async function limitRequestRate(ctx: Context, next: Next): Promise<void> {
    if (limit === 0 || RATE_LIMIT_EXEMPT_PATHS.has(ctx.path)) return next();
    const now = services.clock.now();
    const window = windowStartOf(now);
    if (window !== prunedWindow) {
      prunedWindow = window;
      // Housekeeping off the request's path: a failure costs a few stale rows, never the request.
      deleteStaleCounters(services.db, now).catch((err: unknown) => services.logger.warn({ err }, 'could not delete stale rate-limit counters'));
    }
    const count = await countRequest(services.db, counterKey(ctx), now);
    if (count > limit) {
      const retryAfterSeconds = Math.max(1, Math.ceil((window + RATE_LIMIT_WINDOW_MS - now) / 1000));
      throw new TooManyRequestsError(`too many requests: at most ${limit} per minute (retry after ${retryAfterSeconds} seconds)`, retryAfterSeconds);
    }
    await next();
  };
}
