/** SQL of login sessions. Only the SHA-256 of a session token is ever stored. */
import type { Knex } from 'knex';
import { newId } from '../db/ids.ts';
import { findPage } from '../db/search.ts';

export interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  prev_token_hash: string | null;
  rotated_at: number | string;
  created_at: number | string;
  last_seen_at: number | string;
  revoked_at: number | string | null;
  ip: string | null;
  user_agent: string | null;
  /** 0 or 1 as the databases answer: the session must enrol a second factor first. */
  mfa_enrolment_pending: number | boolean;
}

export interface SessionLimits {
  maxLifetimeMs: number;
  idleTimeoutMs: number;
  rotationGraceMs: number;
}

export async function insertSession(
  db: Knex,
  session: { userId: string; tokenHash: string; ip: string | null; userAgent: string | null },
  now: number,
): Promise<string> {
  const id = newId('ses');
  await db('sessions').insert({
    id,
    user_id: session.userId,
    token_hash: session.tokenHash,
    prev_token_hash: null,
    rotated_at: now,
    created_at: now,
    last_seen_at: now,
    revoked_at: null,
    ip: session.ip,
    user_agent: session.userAgent,
  });
  return id;
}

/** Sessions that are neither revoked nor past their lifetime or idle limit. */
function live(db: Knex, now: number, limits: SessionLimits): Knex.QueryBuilder {
  return db('sessions')
    .whereNull('revoked_at')
    .where('created_at', '>', now - limits.maxLifetimeMs)
    .where('last_seen_at', '>', now - limits.idleTimeoutMs);
}

export async function countLiveSessions(db: Knex, now: number, limits: SessionLimits): Promise<number> {
  const [row] = await live(db, now, limits).count<Array<{ total: number | string }>>({ total: '*' });
  return Number(row?.total ?? 0);
}

/** What findLiveSessionByTokenHash asks of a row, asked of one already read (a cached row, src/identity/caches.ts). */
export function isSessionLive(row: SessionRow, tokenHash: string, now: number, limits: SessionLimits): boolean {
  const presented = row.token_hash === tokenHash || (row.prev_token_hash === tokenHash && Number(row.rotated_at) > now - limits.rotationGraceMs);
  return presented && row.revoked_at === null && Number(row.created_at) > now - limits.maxLifetimeMs && Number(row.last_seen_at) > now - limits.idleTimeoutMs;
}

/** The live session whose current token, or whose previous token still in its grace period, has this hash. */
export async function findLiveSessionByTokenHash(db: Knex, tokenHash: string, now: number, limits: SessionLimits): Promise<SessionRow | undefined> {
  return live(db, now, limits)
    .where((q) => q.where('token_hash', tokenHash).orWhere((p) => p.where('prev_token_hash', tokenHash).where('rotated_at', '>', now - limits.rotationGraceMs)))
    .first();
}

/** One page of the user's live sessions, newest first. */
export async function findLiveSessionsOfUserPage(
  db: Knex,
  userId: string,
  now: number,
  limits: SessionLimits,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: SessionRow[] }> {
  return findPage<SessionRow>(
    () => live(db, now, limits).where('user_id', userId).select('*'),
    [
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ],
    page,
  );
}

/** Replaces the token if `presentedHash` is still the current one; false when another request rotated first. */
export async function rotateSessionToken(db: Knex, sessionId: string, presentedHash: string, newHash: string, now: number): Promise<boolean> {
  const updated = await db('sessions')
    .where({ id: sessionId, token_hash: presentedHash })
    .update({ token_hash: newHash, prev_token_hash: presentedHash, rotated_at: now, last_seen_at: now });
  return updated === 1;
}

export async function touchSession(db: Knex, sessionId: string, now: number): Promise<void> {
  await db('sessions').where('id', sessionId).update({ last_seen_at: now });
}

/** Revokes one live session of the user; false when the user has no such live session. */
export async function revokeLiveSessionOfUser(db: Knex, userId: string, sessionId: string, now: number, limits: SessionLimits): Promise<boolean> {
  return (await live(db, now, limits).where({ id: sessionId, user_id: userId }).update({ revoked_at: now })) === 1;
}

export async function revokeSession(db: Knex, sessionId: string, now: number): Promise<boolean> {
  return (await db('sessions').where('id', sessionId).whereNull('revoked_at').update({ revoked_at: now })) === 1;
}

/** Revokes every session of the user, but `keepSessionId`; returns how many. */
export async function revokeSessionsOfUser(db: Knex, userId: string, now: number, keepSessionId?: string | null): Promise<number> {
  const query = db('sessions').where('user_id', userId).whereNull('revoked_at');
  if (keepSessionId) query.whereNot('id', keepSessionId);
  return query.update({ revoked_at: now });
}

export async function deleteAllSessions(db: Knex): Promise<number> {
  return db('sessions').delete();
}

/** When the session's user signed in: its creation, which rotation keeps. */
export async function findSessionSignInTime(db: Knex, sessionId: string): Promise<number | undefined> {
  const row: { created_at: number | string } | undefined = await db('sessions').where('id', sessionId).first('created_at');
  return row ? Number(row.created_at) : undefined;
}

/** Marks a session as one that must enrol a second factor before it may do anything else. */
export async function markSessionEnrolmentPending(db: Knex, sessionId: string): Promise<void> {
  await db('sessions').where('id', sessionId).update({ mfa_enrolment_pending: true });
}

/** The user has a second factor now: none of their sessions waits for one. */
export async function clearEnrolmentPendingOfUser(db: Knex, userId: string): Promise<void> {
  await db('sessions').where({ user_id: userId, mfa_enrolment_pending: true }).update({ mfa_enrolment_pending: false });
}
