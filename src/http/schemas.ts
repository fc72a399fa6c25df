/**
 * The JSON-schema pieces every route shares for ids, names, logins, emails and passwords, so a
 * rule about what such a value may hold lives in one place. Text a person reads back (a name, a
 * login, an email) refuses C0 controls (NUL included), DEL and the bidirectional controls
 * (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069): they hide or reorder what an admin
 * sees, so "admin\u202Egnp.exe" could pass for another account.
 */
import { MIN_PASSWORD_LENGTH } from '../crypto/password.ts';

export const UNSAFE_CHARACTERS = '\\u0000-\\u001F\\u007F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069';
const SAFE_TEXT = `^[^${UNSAFE_CHARACTERS}]*$`;
const SAFE_NON_BLANK_TEXT = `^[^${UNSAFE_CHARACTERS}]*[^\\s${UNSAFE_CHARACTERS}][^${UNSAFE_CHARACTERS}]*$`;
const EMAIL_PART = `[^\\s@${UNSAFE_CHARACTERS}]+`;

/** A database id in a path or body: lookups only, so any short string (a wrong one is a 404). */
export const idSchema = { type: 'string', minLength: 1, maxLength: 40 } as const;

/** A name a person gives a user, team, token or API key. */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 190, pattern: SAFE_TEXT } as const;

/** A name that must show something: an org or a service account. */
export const nonBlankNameSchema = { type: 'string', minLength: 1, maxLength: 190, pattern: SAFE_NON_BLANK_TEXT } as const;

/** Logins are plain ASCII, which already keeps controls and bidi characters out. */
export const loginSchema = { type: 'string', minLength: 1, maxLength: 190, pattern: '^[A-Za-z0-9._@+-]+$' } as const;

export const emailSchema = { type: 'string', minLength: 3, maxLength: 190, pattern: `^${EMAIL_PART}@${EMAIL_PART}$` } as const;

/** An email that may be cleared with "" (a team's or an org's contact address). */
export const optionalEmailSchema = { type: 'string', maxLength: 190, pattern: `^(|${EMAIL_PART}@${EMAIL_PART})$` } as const;

/** A login or an email, as typed to find a user. */
export const loginOrEmailSchema = { type: 'string', minLength: 1, maxLength: 190, pattern: SAFE_TEXT } as const;

/** The fields of a user's profile a user or a server admin may change. */
export const profileSchema = {
  type: 'object',
  properties: { name: nameSchema, email: emailSchema, login: loginSchema },
  minProperties: 1,
  additionalProperties: false,
} as const;

/** A new password; what it may not be (common, the login) is checked by the password policy. */
export const newPasswordSchema = { type: 'string', minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 } as const;

/** A password given to prove who one is; its length rules are those of when it was set. */
export const givenPasswordSchema = { type: 'string', minLength: 1, maxLength: 1024 } as const;

/**
 * The bounds of a number a request gives (src/http/guard.ts refuses a schema without them): each
 * is what the column or the use behind it holds. Epoch milliseconds stop at the last instant a
 * JavaScript Date holds (year 275760), well inside a BIGINT column.
 */
export const MAX_EPOCH_MS = 8_640_000_000_000_000;
export const MAX_EPOCH_SECONDS = MAX_EPOCH_MS / 1000;
/** The largest value of an INT column: versions, quota limits. */
export const MAX_INT_COLUMN = 2_147_483_647;

/** A point in time in ms since the epoch, not before it (a change entry's time, a time range's ends). */
export const epochMsSchema = { type: 'integer', minimum: 0, maximum: MAX_EPOCH_MS } as const;

/** The version a writer read, for optimistic locking against an INT column. */
export const versionSchema = (minimum: 0 | 1) => ({ type: 'integer', minimum, maximum: MAX_INT_COLUMN }) as const;
