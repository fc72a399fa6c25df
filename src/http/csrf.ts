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
import type { Principal } from '../principal.ts';
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

/** Whether a page of this origin may act with the session cookie: this service's own, or one in CORS_ORIGINS. */
function isTrustedOrigin(ctx: Context, listed: Set<string>, origin: string | null): boolean {
  return origin !== null && (origin === ownOrigin(ctx) || listed.has(origin));
}

export function csrfProtection(corsOrigins: string[]) {
  const listed = listedOrigins(corsOrigins);
  return function refuseCrossSiteCookieRequests(ctx: Context, next: Next): Promise<void> {
    const principal = ctx.state.principal as Principal | undefined;
    if (principal?.via === 'session' && !SAFE_METHODS.has(ctx.method)) {
      const origin = requestingOrigin(ctx);
      if (origin !== undefined && !isTrustedOrigin(ctx, listed, origin)) {
        throw new ForbiddenError('cross-site request refused: a request with the session cookie must come from this service or an origin in CORS_ORIGINS');
      }
    }
    return next();
  };
}

/** `Sec-Fetch-Site` values by which the browser says a page of another origin started the request. */
const FOREIGN_FETCH_SITES = new Set(['cross-site', 'same-site']);

/**
 * Refuses a GET that changes something (the spec's `GET /api/logout`) when another site's page
 * started it: a link, an image or a redirect there carries the session cookie too, and a browser
 * sends no Origin with it. The page is known by Origin or Referer, and by `Sec-Fetch-Site`,
 * which the browser sets from the whole redirect chain; either naming a foreign page refuses,
 * unless that page is an origin in CORS_ORIGINS. A request naming none (an address typed into
 * the browser, `Sec-Fetch-Site: none`, or a client such as curl) passes.
 */
export function refuseCrossSiteNavigation(ctx: Context, corsOrigins: string[]): void {
  const listed = listedOrigins(corsOrigins);
  const origin = requestingOrigin(ctx);
  const foreignPage = origin !== undefined && !isTrustedOrigin(ctx, listed, origin);
  const foreignFetch = FOREIGN_FETCH_SITES.has(ctx.get('sec-fetch-site').toLowerCase()) && !(origin && listed.has(origin));
  if (foreignPage || foreignFetch) {
    throw new ForbiddenError(`cross-site request refused: ${ctx.method} ${ctx.path} must come from this service or an origin in CORS_ORIGINS`);
  }
}
