/**
 * Changing a user's name, email or login — by the user itself or by a server admin. Only what
 * differs is written and audited, and a login or email may not equal another user's login or
 * email: the login form accepts either, so a clash would lock someone out.
 */
import { recordAudit, type Actor } from '../audit/writer.ts';
import type { Tx } from '../db/transaction.ts';
import { ConflictError } from '../errors.ts';
import { userTarget } from './session-revocation.ts';
import { findUserClashing, updateUserProfile, type UserRow } from './users.store.ts';

export async function assertNoClash(tx: Tx, values: string[], exceptUserId?: string): Promise<void> {
  if (await findUserClashing(tx.db, values, exceptUserId)) throw new ConflictError('a user with that login or email already exists');
}

type Profile = { name?: string; email?: string; login?: string };

/** The fields of profile that differ from the user's (email and login compared as stored, lower-case). */
export function profileChanges(user: UserRow, profile: Profile): Profile {
  return {
    ...(profile.name !== undefined && profile.name !== user.name && { name: profile.name }),
    ...(profile.email !== undefined && profile.email.toLowerCase() !== user.email && { email: profile.email }),
    ...(profile.login !== undefined && profile.login.toLowerCase() !== user.login && { login: profile.login }),
  };
}

export async function changeProfile(tx: Tx, actor: Actor, user: UserRow, profile: Profile, by: 'self' | 'admin', now: number): Promise<void> {
  const changes = profileChanges(user, profile);
  const fields = Object.keys(changes).sort();
  if (fields.length === 0) return;
  await assertNoClash(
    tx,
    [changes.login, changes.email].filter((value): value is string => value !== undefined),
    user.id,
  );
  await updateUserProfile(tx.db, user.id, changes, now);
  const login = changes.login?.toLowerCase() ?? user.login;
  await recordAudit(tx.db, actor, { action: 'user.updated', target: userTarget({ id: user.id, login }), metadata: { fields, by } }, now);
}
