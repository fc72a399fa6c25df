/**
 * Login sessions: issuing one (token to the client once, its hash to the DB), and turning a
 * `svc_session` cookie back into a principal while enforcing the lifetime and idle limits.
 */
import type { Context } from 'koa';
import { clientIp } from '../audit/writer.ts';
import type { Config } from '../config.ts';
import { randomToken, sha256Hex } from '../crypto/tokens.ts';
import type { Tx } from '../db/transaction.ts';
import type { Services } from '../services.ts';
import type { Principal } from './principal.ts';
import { findSessionByTokenHash, insertSession, touchSession } from './sessions.store.ts';
import { findUserById, toPrincipalUser } from './users.store.ts';

export const SESSION_COOKIE = 'svc_session';
/** last_seen_at is written at most this often, so that reads stay reads. */
const TOUCH_EVERY_MS = 60_000;

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
  ctx.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.session.cookieSecure,
    path: '/',
    maxAge: config.session.maxLifetimeMs,
    overwrite: true,
  });
}

export async function principalFromSession(services: Services, token: string): Promise<Principal | null> {
  const now = services.clock.now();
  const { session: limits } = services.config;
  const session = await findSessionByTokenHash(services.db, sha256Hex(token));
  if (!session) return null;
  if (Number(session.created_at) + limits.maxLifetimeMs <= now) return null;
  if (Number(session.last_seen_at) + limits.idleTimeoutMs <= now) return null;
  const user = await findUserById(services.db, session.user_id);
  if (!user || user.is_disabled || user.is_service_account) return null;
  if (now - Number(session.last_seen_at) >= TOUCH_EVERY_MS) await touchSession(services.db, session.id, now);
  return { user: toPrincipalUser(user), via: 'session', sessionId: session.id };
}
