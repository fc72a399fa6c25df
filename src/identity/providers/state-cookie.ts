/**
 * The short-lived state cookie that carries a login's secrets (state, PKCE verifier, nonce, the
 * kept redirect, and for an explicit link the signed-in user and session) from
 * `GET /api/login/<provider>` or `POST /api/user/auth-links/<provider>` to its callback. Its
 * value is the JSON payload and an HMAC-SHA256 under JWT_SECRET, so it cannot be forged or moved
 * to another provider; it is
 * HttpOnly, SameSite=Lax (the callback is a top-level navigation from the provider), scoped to
 * the provider's paths, and cleared by the callback whatever the outcome.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config, OAuthProviderId } from '../../config.ts';
import type { LoginChecks } from './types.ts';

export const STATE_COOKIE = 'svc_oauth_state';
export const STATE_TTL_MS = 10 * 60 * 1000;

export interface LoginState extends LoginChecks {
  provider: OAuthProviderId;
  redirect: string;
  expiresAt: number;
  /** An explicit link: the identity joins this signed-in user, whose session must come back with the browser. */
  link?: { userId: string; sessionId: string };
}

function signature(config: Config, payload: string): string {
  return createHmac('sha256', config.jwtSecret).update(`${STATE_COOKIE}:${payload}`).digest('base64url');
}

const cookieOptions = (config: Config, provider: OAuthProviderId) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: config.session.cookieSecure,
  path: `/api/login/${provider}`,
  overwrite: true,
});

export function setStateCookie(ctx: Context, config: Config, state: LoginState): void {
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  if (config.session.cookieSecure) ctx.cookies.secure = true;
  ctx.cookies.set(STATE_COOKIE, `${payload}.${signature(config, payload)}`, { ...cookieOptions(config, state.provider), maxAge: STATE_TTL_MS });
}

export function clearStateCookie(ctx: Context, config: Config, provider: OAuthProviderId): void {
  if (config.session.cookieSecure) ctx.cookies.secure = true;
  ctx.cookies.set(STATE_COOKIE, '', { ...cookieOptions(config, provider), maxAge: 0 });
}

/** The login state of the request's cookie, if it is ours, for this provider and not expired; otherwise why not. */
export function readStateCookie(ctx: Context, config: Config, provider: OAuthProviderId, now: number): LoginState | string {
  const value = ctx.cookies.get(STATE_COOKIE);
  if (!value) return 'state cookie missing';
  const dot = value.lastIndexOf('.');
  const payload = value.slice(0, Math.max(dot, 0));
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(signature(config, payload));
  if (dot <= 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) return 'state cookie invalid';
  const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as LoginState;
  if (state.provider !== provider) return 'state cookie of another provider';
  if (state.expiresAt <= now) return 'state cookie expired';
  return state;
}
