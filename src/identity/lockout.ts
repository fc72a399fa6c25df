/**
 * The login lockout: at most 5 failed attempts per (client IP + account) per 5 minutes, counted
 * in the database so every instance shares it. An account is one counter however it is typed
 * (login or email, any case, surrounding blanks); a login that names no account is counted by
 * its normalised text. A wrong old password on a password change counts against the same
 * account counter, so neither door gives more guesses than the other.
 *
 * An attempt first takes a slot with one atomic conditional UPDATE (failures < 5); only an
 * attempt that got a slot may check the password, so of any number of concurrent wrong attempts
 * at most 5 reach the check. A success gives the slot back by clearing the counter.
 */
import type { Knex } from 'knex';
import { sha256Hex } from '../crypto/tokens.ts';
import { TooManyRequestsError } from '../errors.ts';

export const MAX_FAILURES = 5;
export const WINDOW_MS = 5 * 60_000;

/** Whose failures an attempt counts against: an existing account, or the login as typed. */
export type LockoutTarget = { userId: string } | { login: string };

/** One counter: its key (the address and the account or login, hashed) and the account it counts against, if any. */
export interface LockoutCounter {
  key: string;
  userId: string | null;
}

export function lockoutKey(ip: string | null, target: LockoutTarget): LockoutCounter {
  const subject = 'userId' in target ? `account:${target.userId}` : `login:${target.login.trim().toLowerCase()}`;
  return { key: sha256Hex(`${ip ?? 'unknown'}|${subject}`), userId: 'userId' in target ? target.userId : null };
}

export type SlotResult = { granted: true } | { granted: false; retryAfterSeconds: number };

export async function takeAttemptSlot(db: Knex, { key, userId }: LockoutCounter, now: number): Promise<SlotResult> {
  await db('login_attempts').insert({ key, user_id: userId, window_start: now, failures: 0 }).onConflict('key').ignore();
  await db('login_attempts')
    .where('key', key)
    .where('window_start', '<=', now - WINDOW_MS)
    .update({ window_start: now, failures: 0 });
  const taken = await db('login_attempts').where('key', key).where('failures', '<', MAX_FAILURES).increment('failures', 1);
  if (taken === 1) return { granted: true };
  const row: { window_start: number | string } | undefined = await db('login_attempts').where('key', key).first('window_start');
  const reopensAt = Number(row?.window_start ?? now) + WINDOW_MS;
  return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((reopensAt - now) / 1000)) };
}

/** The refusal of an attempt that got no slot: 429 with a Retry-After hint. */
export function lockedOut(retryAfterSeconds: number): TooManyRequestsError {
  return new TooManyRequestsError(`too many login attempts: try again later (retry after ${retryAfterSeconds} seconds)`, retryAfterSeconds);
}

/** An attempt that never reached the password check (the service was too busy to check it) costs nothing. */
export async function giveBackAttemptSlot(db: Knex, { key }: LockoutCounter): Promise<void> {
  await db('login_attempts').where('key', key).where('failures', '>', 0).decrement('failures', 1);
}

export async function clearAttempts(db: Knex, { key }: LockoutCounter): Promise<void> {
  await db('login_attempts').where('key', key).delete();
}

/** Lifts the account's lockout from every address (an operator's reset); returns how many counters it held. */
export async function clearAttemptsOfUser(db: Knex, userId: string): Promise<number> {
  return db('login_attempts').where('user_id', userId).delete();
}
