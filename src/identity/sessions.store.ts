/** SQL of login sessions. Only the SHA-256 of a session token is ever stored. */
import type { Knex } from 'knex';
import { newId } from '../db/ids.ts';

export interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  prev_token_hash: string | null;
  rotated_at: number | string;
  created_at: number | string;
  last_seen_at: number | string;
  revoked_at: number | string | null;
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

/** The unrevoked session whose token has this hash. */
export async function findSessionByTokenHash(db: Knex, tokenHash: string): Promise<SessionRow | undefined> {
  return db('sessions').whereNull('revoked_at').where('token_hash', tokenHash).first();
}

export async function touchSession(db: Knex, sessionId: string, now: number): Promise<void> {
  await db('sessions').where('id', sessionId).update({ last_seen_at: now });
}

export async function deleteAllSessions(db: Knex): Promise<number> {
  return db('sessions').delete();
}
