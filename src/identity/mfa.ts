/**
 * Second factors of accounts that sign in with a password (local or LDAP): TOTP (RFC 6238: SHA-1,
 * six digits, 30-second steps, one step of drift either way), one-time recovery codes, and the
 * signed login challenge that stands between a correct password and a session.
 *
 * A code is taken once: the time step of the last accepted code is stored and a code of that
 * step or an earlier one is refused. The login challenge is `<id>.<user>.<expiry>.<HMAC>` under a
 * key derived from SECRET_KEY, so a forged, altered or foreign one is refused before any lookup;
 * its row makes it single-use and counts its wrong codes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { Secret, TOTP } from 'otpauth';
import type { Config } from '../config.ts';
import type { SecretBox } from '../crypto/secretbox.ts';
import { verifyPassword } from '../crypto/password.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import type { Services } from '../services.ts';
import { findLinkOfUser } from './auth-links.store.ts';
import { clearAttempts, lockedOut, lockoutKey, takeAttemptSlot, type LockoutCounter } from './lockout.ts';
import { LDAP_AUTH_MODULE } from './providers/ldap/sync.ts';
import type { UserRow } from './users.store.ts';

export const TOTP_PERIOD_SECONDS = 30;
const TOTP_DIGITS = 6;
/** Steps of clock drift accepted either way. */
const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
/** How long a login waits for its second factor. */
export const LOGIN_CHALLENGE_TTL_MS = 5 * 60_000;
/** Wrong second factors one login challenge takes before it is void (the account's lockout counts them too). */
export const MAX_CHALLENGE_FAILURES = 5;
const ISSUER = 'Gatehouse';

function totpOf(secretBase32: string, label: string): TOTP {
  return new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) });
}

/** A fresh secret (160 bits, base32) and its `otpauth://` URI for an authenticator app. */
export function newTotpSecret(login: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, uri: totpOf(secret, login).toString() };
}

/** The time step a code is valid for at `now` (one step of drift either way), or null. */
export function totpStepOf(secretBase32: string | null, code: string, now: number): number | null {
  if (secretBase32 === null || !/^\d{6}$/.test(code)) return null;
  const delta = totpOf(secretBase32, 'check').validate({ token: code, timestamp: now, window: TOTP_WINDOW });
  return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
}

/**
 * The secret of a stored TOTP row, or null when it cannot be opened (sealed under another
 * SECRET_KEY): then no code matches, and a recovery code or an admin's reset is the way back in.
 */
export function openTotpSecret(box: SecretBox, sealed: string): string | null {
  try {
    return box.open(sealed);
  } catch {
    return null;
  }
}

/** Whether what the user typed has the form of a TOTP code (else it is taken as a recovery code). */
export const isTotpCode = (code: string) => /^\d{6}$/.test(code.replace(/\s/g, ''));

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten codes of 10 characters (about 49 bits each), shown as `xxxxx-xxxxx`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from(randomBytes(10), (byte) => RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

function challengeKey(config: Config): Buffer {
  return createHmac('sha256', config.secretKey).update('gatehouse mfa login challenge').digest();
}

function challengeSignature(config: Config, id: string, userId: string, expiresAt: number): string {
  return createHmac('sha256', challengeKey(config)).update(`${id}.${userId}.${expiresAt}`).digest('base64url');
}

export function signLoginChallenge(config: Config, id: string, userId: string, expiresAt: number): string {
  return `${id}.${userId}.${expiresAt}.${challengeSignature(config, id, userId, expiresAt)}`;
}

/** The id and user of a challenge whose signature is ours and that has not expired; else null. */
export function readLoginChallenge(config: Config, token: string, now: number): { id: string; userId: string } | null {
  const [id, userId, expiry, signature, ...rest] = token.split('.');
  if (!id || !userId || !expiry || !signature || rest.length > 0 || !/^\d+$/.test(expiry)) return null;
  const expected = Buffer.from(challengeSignature(config, id, userId, Number(expiry)));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return Number(expiry) > now ? { id, userId } : null;
}

/** Whether MFA_REQUIRED_FOR names the user. */
export function mfaRequiredFor(config: Config, user: Pick<UserRow, 'is_svc_admin'>): boolean {
  if (config.mfaRequiredFor === 'all') return true;
  return config.mfaRequiredFor === 'server-admins' && !!Number(user.is_svc_admin);
}

/** How the account proves its password: locally, through LDAP, or not at all (an external login's account). */
export async function passwordKindOf(services: Services, user: UserRow): Promise<'local' | 'ldap' | null> {
  if (user.password_hash) return 'local';
  if (services.ldap && (await findLinkOfUser(services.db, user.id, LDAP_AUTH_MODULE))) return 'ldap';
  return null;
}

/** The refusal of a second factor for an account that does not sign in with a password. */
export const NO_PASSWORD_LOGIN = 'this account signs in through an external identity provider, which is where its second factor belongs';

/**
 * The user proves their password again (local, or through the directory) before a change of
 * their second factors. A wrong one is a guess like one at the login form and takes a slot of the
 * account's lockout.
 */
export async function confirmPasswordForFactors(services: Services, clientIp: string | null, user: UserRow, password: string): Promise<void> {
  const kind = await passwordKindOf(services, user);
  if (!kind) throw new BadRequestError(NO_PASSWORD_LOGIN);
  const lockout = lockoutKey(clientIp, { userId: user.id });
  const slot = await takeAttemptSlot(services.db, lockout, services.clock.now());
  if (!slot.granted) throw lockedOut(slot.retryAfterSeconds);
  const matches = kind === 'local' ? await verifyPassword(password, user.password_hash) : (await services.ldap!.authenticate(user.login, password)).ok;
  if (!matches) throw new BadRequestError('the password is not correct');
  await clearAttempts(services.db, lockout);
}

/** Takes a lockout slot of the account for one second-factor attempt: a wrong code is a guess like a wrong password. */
export async function takeSecondFactorSlot(db: Knex, clientIp: string | null, userId: string, now: number): Promise<LockoutCounter> {
  const lockout = lockoutKey(clientIp, { userId });
  const slot = await takeAttemptSlot(db, lockout, now);
  if (!slot.granted) throw lockedOut(slot.retryAfterSeconds);
  return lockout;
}

export const WRONG_CODE = 'the code is not correct, or was used already';

export const wrongCode = () => new UnauthorizedError(WRONG_CODE);
