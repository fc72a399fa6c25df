/**
 * A user proving again who they are before a sensitive change of their own account (password,
 * email, login, another login linked): a stolen session alone must not be enough to take the
 * account over. A wrong password is a guess like one at the login form, so it takes a slot of the
 * account's login lockout and neither door gives more guesses than the other.
 */
import type { Knex } from 'knex';
import { verifyPassword } from '../crypto/password.ts';
import { BadRequestError, ForbiddenError } from '../errors.ts';
import type { Clock } from '../services.ts';
import { clearAttempts, lockedOut, lockoutKey, takeAttemptSlot } from './lockout.ts';
import type { Principal } from '../principal.ts';
import { findSessionSignInTime } from './sessions.store.ts';
import { findUserById } from './users.store.ts';

export async function confirmOwnPassword(
  db: Knex,
  clock: Clock,
  clientIp: string | null,
  user: { id: string; password_hash: string },
  password: string,
  wrongMessage: string,
): Promise<void> {
  const lockout = lockoutKey(clientIp, { userId: user.id });
  const slot = await takeAttemptSlot(db, lockout, clock.now());
  if (!slot.granted) throw lockedOut(slot.retryAfterSeconds);
  if (!(await verifyPassword(password, user.password_hash))) throw new BadRequestError(wrongMessage);
  await clearAttempts(db, lockout);
}

/** How recent the sign-in of an account without a password must be for it to link another login. */
export const RECENT_SIGN_IN_MS = 10 * 60_000;

/**
 * Proof, before another login is linked to the caller's account, that the caller is its owner and
 * not someone holding a stolen session: the account's password when it has one, else a sign-in in
 * the last ten minutes. Only a browser session may link (the provider sends the same browser back).
 */
export async function reauthenticateToLink(db: Knex, clock: Clock, clientIp: string | null, principal: Principal, password: string | undefined): Promise<void> {
  if (principal.via !== 'session' || !principal.sessionId) throw new ForbiddenError('linking a login needs a signed-in browser session, not an API token');
  const user = await findUserById(db, principal.user.id);
  if (user?.password_hash) {
    if (!password) throw new BadRequestError('password is required: confirm your password to link another login');
    await confirmOwnPassword(db, clock, clientIp, { id: user.id, password_hash: user.password_hash }, password, 'the password is not correct');
    return;
  }
  const signedInAt = await findSessionSignInTime(db, principal.sessionId);
  if (signedInAt === undefined || clock.now() - signedInAt > RECENT_SIGN_IN_MS)
    throw new ForbiddenError('sign in again to link another login: your last sign-in is more than 10 minutes old');
}
