/**
 * A user proving again who they are before a sensitive change of their own account (password,
 * email, login): a stolen session alone must not be enough to take the account over. A wrong
 * password is a guess like one at the login form, so it takes a slot of the account's login
 * lockout and neither door gives more guesses than the other.
 */
import type { Knex } from 'knex';
import { verifyPassword } from '../crypto/password.ts';
import { BadRequestError } from '../errors.ts';
import type { Clock } from '../services.ts';
import { clearAttempts, lockedOut, lockoutKey, takeAttemptSlot } from './lockout.ts';

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
