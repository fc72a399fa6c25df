/**
 * Authentication: the `svc_session` cookie, or an API token as `Authorization: Bearer` or
 * `X-Api-Key`. A token that is present but not valid is a 401 on every route, so an API client
 * learns at once that its credential is dead; a dead cookie leaves the request anonymous (the
 * login page must still load), and protected routes then say the session expired.
 */
import type { Context, Next } from 'koa';
import type { Principal } from '../principal.ts';
import type { Services } from '../services.ts';
import { UnauthorizedError } from '../errors.ts';
import type { CallerServices } from './caller-services.ts';

/** The cookie that carries a login session (src/identity/sessions.ts issues and reads its value). */
export const SESSION_COOKIE = 'svc_session';

/** Resolves an API token of one kind (by its prefix) to its principal, or null when unknown. */
export type TokenResolver = (services: Services, token: string) => Promise<Principal | null>;

/** The API token a request presents (Bearer or X-Api-Key), or null; a malformed Authorization header is a 401. */
export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (header && !match) throw new UnauthorizedError('the Authorization header must be "Bearer <token>"');
  return match?.[1] ?? (ctx.get('x-api-key').trim() || null);
}

/** How the cookies package finds a cookie in the header: the first `name=`, at the start or after a `;`. */
const SESSION_COOKIE_PATTERN = new RegExp(`(?:^|;) *${SESSION_COOKIE}=([^;]*)`);

/**
 * The session cookie's value as `ctx.cookies.get` reads it (surrounding quotes dropped), from the
 * header itself: Koa's cookies object, built on first use, cost more than the read on every
 * request with a cookie.
 */
function sessionCookie(ctx: Context): string | undefined {
  const header = ctx.req.headers.cookie;
  const value = header ? SESSION_COOKIE_PATTERN.exec(header)?.[1] : undefined;
  return value?.[0] === '"' ? value.slice(1, -1) : value;
}

/** `unauthenticatedPaths`: the routes declared `skipAuthentication`, which read no credential of ours. */
export function authenticate(
  services: Services,
  callers: Pick<CallerServices, 'sessionPrincipal'>,
  tokenResolvers: Record<string, TokenResolver>,
  unauthenticatedPaths: ReadonlySet<string> = new Set(),
) {
  const prefixes = Object.keys(tokenResolvers);
  async function authenticateRequest(ctx: Context, next: Next): Promise<void> {
    const token = bearerToken(ctx);
    if (token) {
      const prefix = prefixes.find((p) => token.startsWith(p));
      const principal = prefix !== undefined ? await tokenResolvers[prefix]!(services, token) : null;
      if (!principal) throw new UnauthorizedError('invalid, expired or revoked API token');
      ctx.state.principal = principal;
    } else {
      const cookie = sessionCookie(ctx);
      if (cookie) {
        const principal = await callers.sessionPrincipal(ctx, cookie);
        // A dead session cookie on a public route (the login page) must not block it.
        if (principal) ctx.state.principal = principal;
        else ctx.state.sessionExpired = true;
      }
    }
    await next();
  }
  return (ctx: Context, next: Next): Promise<void> => (unauthenticatedPaths.has(ctx.path) ? next() : authenticateRequest(ctx, next));
}
