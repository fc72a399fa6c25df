/**
 * Cross-site request forgery: a browser attaches the session cookie to a request another site's
 * page makes, so a cookie-authenticated request that changes something must come from a page of
 * this service or of an origin listed in CORS_ORIGINS. The page's origin is the `Origin` header,
 * or without it the origin of `Referer`. A request with neither is let through, as Grafana does:
 * browsers send `Origin` on every cross-site unsafe request, so only a non-browser client (which
 * holds the cookie itself and forges nothing) sends neither. Token requests (Bearer, X-Api-Key)
 * are not affected: a browser never adds a token on its own.
 */
import type { Context, Next } from 'koa';
import type { Principal } from '../identity/principal.ts';
import { fromTrustedProxy } from './client-ip.ts';
import { listedOrigins } from './cors.ts';
import { ForbiddenError } from '../errors.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** `scheme://host[:port]` of a URL (default port dropped, lower-case); null when it is none (`Origin: null`). */
function originOf(url: string): string | null {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** The first value of a forwarding header a proxy may have appended to: what the browser addressed. */
const firstHop = (value: string) => value.split(',')[0]!.trim();

/**
 * This service's origin as the browser sees it: the request's protocol and Host, or the
 * X-Forwarded-Proto and X-Forwarded-Host of a trusted proxy (TRUSTED_PROXIES) in front.
 */
export function ownOrigin(ctx: Context): string | null {
  const forwarded = fromTrustedProxy(ctx);
  const protocol = (forwarded && firstHop(ctx.get('x-forwarded-proto'))) || ctx.protocol;
  const host = (forwarded && firstHop(ctx.get('x-forwarded-host'))) || ctx.host;
  return originOf(`${protocol}://${host}`);
}

/** The origin of the page that made the request: undefined when the request names none. */
function requestingOrigin(ctx: Context): string | null | undefined {
  const origin = ctx.get('origin');
  if (origin) return originOf(origin);
  const referer = ctx.get('referer');
  return referer ? originOf(referer) : undefined;
}

export function csrfProtection(corsOrigins: string[]) {
  const listed = listedOrigins(corsOrigins);
  return function refuseCrossSiteCookieRequests(ctx: Context, next: Next): Promise<void> {
    const principal = ctx.state.principal as Principal | undefined;
    if (principal?.via === 'session' && !SAFE_METHODS.has(ctx.method)) {
      const origin = requestingOrigin(ctx);
      if (origin !== undefined && (origin === null || (origin !== ownOrigin(ctx) && !listed.has(origin)))) {
        throw new ForbiddenError('cross-site request refused: a request with the session cookie must come from this service or an origin in CORS_ORIGINS');
      }
    }
    return next();
  };
}
