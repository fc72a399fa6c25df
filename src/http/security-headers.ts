/**
 * Headers every response carries: `X-Content-Type-Options: nosniff`, so a browser never runs a
 * JSON answer as script or markup; and `Cache-Control: no-store` on a response that hands out a
 * token (`key`: a personal access, service-account or legacy API token), which no cache or
 * history may keep. Only routes hand out tokens, so the route layer asks for the second once its
 * handler has answered (noStoreForTokens); the middleware then has nothing to wait for.
 */
import type { Context, Next } from 'koa';

function carriesTokenKey(body: unknown): boolean {
  return !!body && typeof body === 'object' && !Array.isArray(body) && typeof (body as { key?: unknown }).key === 'string';
}

export function securityHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.res.setHeader('X-Content-Type-Options', 'nosniff');
  return next();
}

/** A route's answer that hands out a token is never stored. */
export function noStoreForTokens(ctx: Context): void {
  if (carriesTokenKey(ctx.body)) ctx.set('Cache-Control', 'no-store');
}
