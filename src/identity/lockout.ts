/**
 * The login lockout: at most 5 failed attempts per (client IP + login) per 5 minutes, counted in
 * the database so every instance shares it. An attempt first takes a slot with one atomic
 * conditional UPDATE (failures < 5); only an attempt that got a slot may check the password, so
 * of any number of concurrent wrong attempts at most 5 reach the check. A success gives the slot
 * back by clearing the counter.
 */
import type { Knex } from 'knex';
import { sha256Hex } from '../crypto/tokens.ts';

export const MAX_FAILURES = 5;
export const WINDOW_MS = 5 * 60_000;

export function lockoutKey(ip: string | null, login: string): string {
  return sha256Hex(`${ip ?? 'unknown'}|${login.trim().toLowerCase()}`);
}

export type SlotResult = { granted: true } | { granted: false; retryAfterSeconds: number };

export async function takeAttemptSlot(db: Knex, key: string, now: number): Promise<SlotResult> {
  await db('login_attempts').insert({ key, window_start: now, failures: 0 }).onConflict('key').ignore();
  await db('login_attempts').where('key', key).where('window_start', '<=', now - WINDOW_MS).update({ window_start: now, failures: 0 });
  const taken = await db('login_attempts').where('key', key).where('failures', '<', MAX_FAILURES).increment('failures', 1);
  if (taken === 1) return { granted: true };
  const row: { window_start: number | string } | undefined = await db('login_attempts').where('key', key).first('window_start');
  const reopensAt = Number(row?.window_start ?? now) + WINDOW_MS;
  return { granted: false, retryAfterSeconds: Math.max(1, Math.ceil((reopensAt - now) / 1000)) };
}

export async function clearAttempts(db: Knex, key: string): Promise<void> {
  await db('login_attempts').where('key', key).delete();
}
