/**
 * Login sessions: issuing one (the token to the client once, its hash to the DB), turning a
 * `svc_session` cookie back into a principal under the lifetime and idle limits, rotating the
 * token every SESSION_ROTATION_INTERVAL_MS of use (the old one stays valid for the grace
 * period), and revoking. The cookie value is `<token>.<HMAC-SHA256 under JWT_SECRET>`: a forged
 * or foreign cookie is refused before any lookup, and a new JWT_SECRET ends every session.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { LRUCache } from 'lru-cache';
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import type { Tx } from '../db/transaction.ts';
import { SESSION_COOKIE } from '../http/authenticate.ts';
import { clientIp } from '../http/client-ip.ts';
import type { Services } from '../services.ts';
import type { Principal } from '../principal.ts';
import {
  findLiveSessionByTokenHash,
  insertSession,
  isSessionLive,
  rotateSessionToken,
  touchSession,
  type SessionLimits,
  type SessionRow,
} from './sessions.store.ts';
import { findUserById, toPrincipalUser } from './users.store.ts';

/** last_seen_at is written at most this often, so that reads stay reads. */
const TOUCH_EVERY_MS = 60_000;

export function sessionLimits(config: Config): SessionLimits {
  return { maxLifetimeMs: config.session.maxLifetimeMs, idleTimeoutMs: config.session.idleTimeoutMs, rotationGraceMs: config.session.rotationGraceMs };
}

function signature(config: Config, token: string): string {
  return createHmac('sha256', config.jwtSecret).update(`${SESSION_COOKIE}:${token}`).digest('base64url');
}

export function sessionCookieValue(config: Config, token: string): string {
  return `${token}.${signature(config, token)}`;
}

/** The token inside a cookie value, if its signature is ours. */
export function tokenFromCookie(config: Config, value: string): string | null {
  const dot = value.lastIndexOf('.');
  if (dot <= 0) return null;
  const token = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1));
  const expected = Buffer.from(signature(config, token));
  return given.length === expected.length && timingSafeEqual(given, expected) ? token : null;
}

/** Bounds the cookie values remembered as verified, per configuration. */
const MAX_VERIFIED_COOKIES = 10_000;
/** Per configuration (its JWT_SECRET): the SHA-256 of a verified cookie value, to the SHA-256 of its token. */
const verifiedCookies = new WeakMap<Config, LRUCache<string, string>>();

/**
 * The SHA-256 of the token inside a cookie value whose signature is ours, else null. A browser
 * sends the same value on every request, and the HMAC was the costliest part of reading it, so a
 * value that verified is remembered, under its JWT_SECRET's configuration, with its token's hash.
 * It is remembered by its own SHA-256, never as itself: what stays in memory opens no session.
 * Only verified values are kept: a forged one is checked every time.
 */
function sessionTokenHash(config: Config, value: string): string | null {
  let verified = verifiedCookies.get(config);
  if (!verified) {
    verified = new LRUCache<string, string>({ max: MAX_VERIFIED_COOKIES });
    verifiedCookies.set(config, verified);
  }
  const valueHash = sha256Hex(value);
  const remembered = verified.get(valueHash);
  if (remembered !== undefined) return remembered;
  const token = tokenFromCookie(config, value);
  if (!token) return null;
  const tokenHash = sha256Hex(token);
  verified.set(valueHash, tokenHash);
  return tokenHash;
}

/** Tests: the keys of the verified cookie values remembered under `config`. */
export function rememberedCookieKeys(config: Config): string[] {
  return [...(verifiedCookies.get(config)?.keys() ?? [])];
}

export async function issueSession(tx: Tx, ctx: Context, userId: string, now: number): Promise<{ sessionId: string; token: string }> {
  const token = randomToken(32);
  const sessionId = await insertSession(
    tx.db,
    { userId, tokenHash: sha256Hex(token), ip: clientIp(ctx), userAgent: ctx.get('user-agent').slice(0, 300) || null },
    now,
  );
  return { sessionId, token };
}

export function setSessionCookie(ctx: Context, config: Config, token: string): void {
  if (config.session.cookieSecure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, sessionCookieValue(config, token), {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.session.cookieSecure,
    path: '/',
    maxAge: config.session.maxLifetimeMs,
    overwrite: true,
  });
}

export function clearSessionCookie(ctx: Context, config: Config): void {
  if (config.session.cookieSecure) ctx.cookies.secure = true;
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: config.session.cookieSecure, path: '/', maxAge: 0, overwrite: true });
}

/** The principal of a session cookie, or null when the cookie is forged, expired or revoked. */
export async function principalFromSession(services: Services, ctx: Context, cookieValue: string): Promise<Principal | null> {
  const { config, db, clock } = services;
  const presentedHash = sessionTokenHash(config, cookieValue);
  if (!presentedHash) return null;
  const now = clock.now();
  const limits = sessionLimits(config);
  const found = await services.caches.sessions.get(presentedHash, now, async () => {
    const session = await findLiveSessionByTokenHash(db, presentedHash, now, limits);
    const user = session && (await findUserById(db, session.user_id));
    return user ? { session, user } : null;
  });
  // A cached session is checked against the limits again: time has passed since it was read.
  if (!found || !isSessionLive(found.session, presentedHash, now, limits)) return null;
  const { session, user } = found;
  if (user.is_disabled || user.is_service_account) return null;

  const isCurrentToken = session.token_hash === presentedHash;
  if (isCurrentToken && now - Number(session.rotated_at) >= config.session.rotationIntervalMs) {
    const fresh = randomToken(32);
    // Of concurrent requests with the same token one rotates; the others go on with the old token in its grace period.
    if (await rotateSessionToken(db, session.id, presentedHash, sha256Hex(fresh), now)) setSessionCookie(ctx, config, fresh);
  } else if (now - Number(session.last_seen_at) >= TOUCH_EVERY_MS) {
    await touchSession(db, session.id, now);
    // the cached row too, or every request would touch it again
    session.last_seen_at = now;
  }
  const principal: Principal = { user: toPrincipalUser(user), via: 'session', sessionId: session.id, pinnedOrgId: null };
  if (Number(session.mfa_enrolment_pending)) principal.mfaEnrolmentPending = true;
  return principal;
}

/** A session as listings show it: never the token or its hash. */
export function presentSession(row: SessionRow, limits: SessionLimits, currentSessionId: string | null = null) {
  const createdAt = Number(row.created_at);
  const seenAt = Number(row.last_seen_at);
  return {
    id: row.id,
    isCurrent: row.id === currentSessionId,
    ip: row.ip,
    userAgent: row.user_agent,
    createdAt: new Date(createdAt).toISOString(),
    seenAt: new Date(seenAt).toISOString(),
    expiresAt: new Date(Math.min(createdAt + limits.maxLifetimeMs, seenAt + limits.idleTimeoutMs)).toISOString(),
  };
}
