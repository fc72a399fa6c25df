/**
 * SQL of second factors: a user's TOTP secret (sealed) and the last time step a code was taken
 * for, recovery codes (only their SHA-256), WebAuthn credentials, the challenge of a pending
 * passkey registration, and the login challenges between a correct password and a session.
 * Every "use once" is one conditional UPDATE, so of two concurrent uses one wins.
 */
import type { Knex } from 'knex';
import { newId } from '../db/ids.ts';
import { sha256Hex } from '../crypto/tokens.ts';

export interface TotpRow {
  user_id: string;
  secret_sealed: string;
  confirmed_at: number | string | null;
  last_used_step: number | string | null;
  created_at: number | string;
}

export interface WebauthnCredentialRow {
  id: string;
  user_id: string;
  credential_hash: string;
  credential_id: string;
  public_key: string;
  counter: number | string;
  transports: string | null;
  name: string;
  created_at: number | string;
  last_used_at: number | string | null;
}

export interface LoginChallengeRow {
  id: string;
  user_id: string;
  method: string;
  webauthn_challenge: string | null;
  failures: number;
  created_at: number | string;
  expires_at: number | string;
  used_at: number | string | null;
}

export async function findTotp(db: Knex, userId: string): Promise<TotpRow | undefined> {
  return db('user_totp').where('user_id', userId).first();
}

/** A new, unconfirmed secret, replacing an unconfirmed one; false when a confirmed one is in place. */
export async function startTotp(db: Knex, userId: string, secretSealed: string, now: number): Promise<boolean> {
  const current = await findTotp(db, userId);
  if (current && current.confirmed_at !== null) return false;
  if (current) await db('user_totp').where('user_id', userId).delete();
  await db('user_totp').insert({ user_id: userId, secret_sealed: secretSealed, confirmed_at: null, last_used_step: null, created_at: now });
  return true;
}

/** Confirms the pending secret with the step of its first code; false when there was none pending. */
export async function confirmTotp(db: Knex, userId: string, step: number, now: number): Promise<boolean> {
  return (await db('user_totp').where('user_id', userId).whereNull('confirmed_at').update({ confirmed_at: now, last_used_step: step })) === 1;
}

/** Takes the time step of an accepted code: false when a code of this step or a later one was taken already (a replay). */
export async function takeTotpStep(db: Knex, userId: string, step: number): Promise<boolean> {
  const taken = await db('user_totp')
    .where('user_id', userId)
    .whereNotNull('confirmed_at')
    .where((q) => q.whereNull('last_used_step').orWhere('last_used_step', '<', step))
    .update({ last_used_step: step });
  return taken === 1;
}

export async function deleteTotp(db: Knex, userId: string): Promise<boolean> {
  return (await db('user_totp').where('user_id', userId).delete()) > 0;
}

/** The form a recovery code is compared in: lower case, without blanks or dashes. */
export const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

export async function replaceRecoveryCodes(db: Knex, userId: string, codes: string[], now: number): Promise<void> {
  await db('user_recovery_codes').where('user_id', userId).delete();
  await db('user_recovery_codes').insert(
    codes.map((code) => ({ id: newId('rc'), user_id: userId, code_hash: sha256Hex(normalizeRecoveryCode(code)), used_at: null, created_at: now })),
  );
}

/** Spends an unused recovery code; false when it is not one of the user's or was used. */
export async function spendRecoveryCode(db: Knex, userId: string, code: string, now: number): Promise<boolean> {
  const spent = await db('user_recovery_codes')
    .where({ user_id: userId, code_hash: sha256Hex(normalizeRecoveryCode(code)) })
    .whereNull('used_at')
    .update({ used_at: now });
  return spent === 1;
}

export async function countUnusedRecoveryCodes(db: Knex, userId: string): Promise<number> {
  const [row] = await db('user_recovery_codes').where('user_id', userId).whereNull('used_at').count<Array<{ total: number | string }>>({ total: '*' });
  return Number(row?.total ?? 0);
}

export async function deleteRecoveryCodes(db: Knex, userId: string): Promise<void> {
  await db('user_recovery_codes').where('user_id', userId).delete();
}

export async function findWebauthnCredentials(db: Knex, userId: string): Promise<WebauthnCredentialRow[]> {
  return db('user_webauthn_credentials').where('user_id', userId).orderBy(['created_at', 'id']);
}

/** The user's credential of this (WebAuthn) credential id, if it is theirs. */
export async function findWebauthnCredentialOfUser(db: Knex, userId: string, credentialId: string): Promise<WebauthnCredentialRow | undefined> {
  return db('user_webauthn_credentials')
    .where({ user_id: userId, credential_hash: sha256Hex(credentialId) })
    .first();
}

export interface NewWebauthnCredential {
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
}

export async function insertWebauthnCredential(db: Knex, credential: NewWebauthnCredential, now: number): Promise<string> {
  const id = newId('pk');
  await db('user_webauthn_credentials').insert({
    id,
    user_id: credential.userId,
    credential_hash: sha256Hex(credential.credentialId),
    credential_id: credential.credentialId,
    public_key: credential.publicKey,
    counter: credential.counter,
    transports: credential.transports.join(',').slice(0, 200) || null,
    name: credential.name,
    created_at: now,
    last_used_at: null,
  });
  return id;
}

/**
 * Records a use: the authenticator's new signature counter, when it keeps one, must have grown
 * past the stored one (a cloned authenticator shows an old one). False when it did not.
 */
export async function recordWebauthnUse(db: Knex, id: string, newCounter: number, now: number): Promise<boolean> {
  const query = db('user_webauthn_credentials').where('id', id);
  if (newCounter > 0) query.where('counter', '<', newCounter);
  return (await query.update({ counter: newCounter, last_used_at: now })) === 1;
}

export async function deleteWebauthnCredential(db: Knex, userId: string, id: string): Promise<WebauthnCredentialRow | undefined> {
  const row: WebauthnCredentialRow | undefined = await db('user_webauthn_credentials').where({ id, user_id: userId }).first();
  if (row) await db('user_webauthn_credentials').where('id', row.id).delete();
  return row;
}

export async function deleteWebauthnCredentials(db: Knex, userId: string): Promise<number> {
  return db('user_webauthn_credentials').where('user_id', userId).delete();
}

export async function savePendingRegistration(db: Knex, userId: string, challenge: string, expiresAt: number): Promise<void> {
  await db('webauthn_registrations').where('user_id', userId).delete();
  await db('webauthn_registrations').insert({ user_id: userId, challenge, expires_at: expiresAt });
}

/** Takes the user's pending registration challenge (once), if it has not expired. */
export async function takePendingRegistration(db: Knex, userId: string, now: number): Promise<string | null> {
  const row: { challenge: string; expires_at: number | string } | undefined = await db('webauthn_registrations').where('user_id', userId).first();
  if (!row) return null;
  const taken = await db('webauthn_registrations').where({ user_id: userId, challenge: row.challenge }).delete();
  return taken === 1 && Number(row.expires_at) > now ? row.challenge : null;
}

/** Whether the user has a second factor to sign in with: a confirmed TOTP secret or a passkey. */
export async function hasSecondFactor(db: Knex, userId: string): Promise<boolean> {
  const [totp, passkey] = await Promise.all([
    db('user_totp').where('user_id', userId).whereNotNull('confirmed_at').first('user_id'),
    db('user_webauthn_credentials').where('user_id', userId).first('id'),
  ]);
  return !!totp || !!passkey;
}

export async function insertLoginChallenge(db: Knex, challenge: { userId: string; method: string; expiresAt: number }, now: number): Promise<string> {
  const id = newId('mfa');
  await db('mfa_login_challenges').insert({
    id,
    user_id: challenge.userId,
    method: challenge.method,
    webauthn_challenge: null,
    failures: 0,
    created_at: now,
    expires_at: challenge.expiresAt,
    used_at: null,
  });
  // the expired ones of anyone are no use to anybody
  await db('mfa_login_challenges').where('expires_at', '<', now).delete();
  return id;
}

export async function findLoginChallenge(db: Knex, id: string): Promise<LoginChallengeRow | undefined> {
  return db('mfa_login_challenges').where('id', id).first();
}

export async function setLoginWebauthnChallenge(db: Knex, id: string, webauthnChallenge: string): Promise<void> {
  await db('mfa_login_challenges').where('id', id).whereNull('used_at').update({ webauthn_challenge: webauthnChallenge });
}

export async function countLoginChallengeFailure(db: Knex, id: string): Promise<void> {
  await db('mfa_login_challenges').where('id', id).increment('failures', 1);
}

/** Spends the challenge; false when it was spent already (by a concurrent request). */
export async function spendLoginChallenge(db: Knex, id: string, now: number): Promise<boolean> {
  return (await db('mfa_login_challenges').where('id', id).whereNull('used_at').update({ used_at: now })) === 1;
}

export async function deleteLoginChallengesOfUser(db: Knex, userId: string): Promise<void> {
  await db('mfa_login_challenges').where('user_id', userId).delete();
}
