/**
 * The general rate limit (RATE_LIMIT_PER_MINUTE; 0 turns it off): at most that many requests per
 * minute per API token, per signed-in user (all their sessions together), and per client address
 * for anonymous requests. Counted in memory and shared by the instances through the database in
 * batches (src/ratelimit/counter.ts): no query on the request's path. Beyond it: 429 with
 * Retry-After, the seconds until the window ends.
 *
 * It runs after authentication, which tells whose request it is; a request refused there (a dead
 * token, 401) is not counted. Health and metrics are exempt (probes and scrapers must always get
 * through), and so is the password login, which has its own per-account lockout.
 */
import type { Context, Next } from 'koa';
import { sha256Hex } from '../crypto/tokens.ts';
import { TooManyRequestsError } from '../errors.ts';
import type { Principal } from '../principal.ts';
import type { SharedRateCounter } from '../ratelimit/counter.ts';
import { RATE_LIMIT_WINDOW_MS } from '../ratelimit/store.ts';
import { bearerToken } from './authenticate.ts';
import { clientIp } from './client-ip.ts';

export const RATE_LIMIT_EXEMPT_PATHS: ReadonlySet<string> = new Set(['/api/health', '/api/health/ready', '/metrics', '/api/login']);

/** Whose allowance a request takes from: its token, its user, or its address; hashed, so that neither memory nor the table holds a credential or an address. */
function counterKey(ctx: Context): string {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal?.via === 'token') return sha256Hex(`token:${bearerToken(ctx)}`);
  if (principal) return sha256Hex(`user:${principal.user.id}`);
  return sha256Hex(`ip:${clientIp(ctx) ?? 'unknown'}`);
}

export function rateLimit(counter: SharedRateCounter, limit: number, clock: { now(): number }) {
  return async function limitRequestRate(ctx: Context, next: Next): Promise<void> {
    if (RATE_LIMIT_EXEMPT_PATHS.has(ctx.path)) return next();
    const now = clock.now();
    const { count, windowStart } = counter.count(counterKey(ctx), now);
    if (count > limit) {
      const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + RATE_LIMIT_WINDOW_MS - now) / 1000));
      throw new TooManyRequestsError(`too many requests: at most ${limit} per minute (retry after ${retryAfterSeconds} seconds)`, retryAfterSeconds);
    }
    await next();
  };
}
