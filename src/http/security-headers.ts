/**
 * Headers every response carries: `X-Content-Type-Options: nosniff`, so a browser never runs a
 * JSON answer as script or markup; and `Cache-Control: no-store` on a response that hands out a
 * token (`key`: a personal access, service-account or legacy API token), which no cache or
 * history may keep.
 */
import type { Context, Next } from 'koa';

function carriesTokenKey(body: unknown): boolean {
  return !!body && typeof body === 'object' && !Array.isArray(body) && typeof (body as { key?: unknown }).key === 'string';
}

export async function securityHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  await next();
  if (carriesTokenKey(ctx.body)) ctx.set('Cache-Control', 'no-store');
}
