/**
 * What a new local password may not be, beyond its length (which the schema checks): one of the
 * common passwords attackers try first, or the account's own login or email. The list is
 * `dictionary['passwords-common']` of @zxcvbn-ts/language-common (MIT), all ~49,000 entries:
 * its first 10,000 miss passwords such as `password1234` (rank 18,529).
 */
import { dictionary } from '@zxcvbn-ts/language-common';
import { BadRequestError } from '../errors.ts';

export const TOO_COMMON = 'this password is too common: choose one that is not on lists of leaked passwords';
export const SAME_AS_IDENTITY = 'the password must not be your login or email';

const COMMON_PASSWORDS = new Set((dictionary['passwords-common'] as string[]).map((password) => password.toLowerCase()));

/** Throws a 400 saying why when `password` may not be set for the account `owner`. */
export function assertAcceptablePassword(password: string, owner: { login: string; email: string | null }): void {
  const candidate = password.toLowerCase();
  if (candidate === owner.login.toLowerCase() || candidate === owner.email?.toLowerCase()) throw new BadRequestError(SAME_AS_IDENTITY);
  if (COMMON_PASSWORDS.has(candidate)) throw new BadRequestError(TOO_COMMON);
}
