/**
 * CORS_ORIGINS: a comma-separated list of browser origins allowed to call the API with their
 * cookies; empty or `*` lets any origin call it, but without credentials — a cookie-carrying
 * cross-origin call is only ever granted to a listed origin.
 */
import type { Context, Next } from 'koa';

const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = 'Content-Type, Authorization, X-Api-Key, X-Svc-Org-Id';

/** The CORS_ORIGINS entries as browsers send an Origin: lower-case, without a trailing slash. */
export function listedOrigins(origins: string[]): Set<string> {
  return new Set(origins.map((origin) => origin.replace(/\/+$/, '').toLowerCase()));
}

export function cors(origins: string[]) {
  const listed = listedOrigins(origins);
  return function applyCors(ctx: Context, next: Next): Promise<void> {
    const origin = ctx.get('origin');
    // on every request's path: set outright unless something before named a Vary of its own
    if (ctx.res.hasHeader('Vary')) ctx.vary('Origin');
    else ctx.res.setHeader('Vary', 'Origin');
    if (origin) {
      if (listed.size === 0) {
        ctx.set('Access-Control-Allow-Origin', '*');
      } else if (listed.has(origin.toLowerCase())) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Credentials', 'true');
      }
    }
    const isPreflight = ctx.method === 'OPTIONS' && !!ctx.get('access-control-request-method');
    if (!isPreflight) return next();
    if (ctx.response.get('Access-Control-Allow-Origin')) {
      ctx.set('Access-Control-Allow-Methods', ALLOWED_METHODS);
      ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', '600');
    }
    ctx.status = 204;
    return Promise.resolve();
  };
}
