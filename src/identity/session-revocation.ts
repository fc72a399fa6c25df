/**
 * Revoking every session of a user, with its audit entry: what a change of the user's own
 * standing sets off — a password change or reset, a disable, an admin logout, a change of the
 * user's org role, removal from an org, the server-admin flag. Changes to roles (a custom role's
 * permissions, role assignments) sign nobody out: the policy applies them at the next request.
 */
import { recordAudit, type Actor } from '../audit/writer.ts';
import type { Tx } from '../db/transaction.ts';
import { revokeSessionsOfUser } from './sessions.store.ts';
import type { UserRow } from './users.store.ts';

export const userTarget = (user: Pick<UserRow, 'id' | 'login'>) => ({ type: 'user', id: user.id, name: user.login });

/**
 * Revokes every session of `user` but `options.keep`, recording how many (and why) when there
 * were any, or always with `options.alwaysRecord`.
 */
export async function revokeAllSessionsOf(
  tx: Tx,
  actor: Actor,
  user: Pick<UserRow, 'id' | 'login'>,
  reason: string,
  now: number,
  options: { keep?: string | null; alwaysRecord?: boolean } = {},
): Promise<number> {
  const count = await revokeSessionsOfUser(tx.db, user.id, now, options.keep);
  const alwaysRecord = options.alwaysRecord ?? false;
  if (count > 0 || alwaysRecord) await recordAudit(tx.db, actor, { action: 'session.revoked', target: userTarget(user), metadata: { count, reason } }, now);
  return count;
}
