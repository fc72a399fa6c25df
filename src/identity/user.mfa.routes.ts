/**
 * The signed-in user's second factors (`/api/user/mfa…`): TOTP enrolment, confirmation and
 * removal, recovery codes (passkeys: user.mfa-passkeys.routes.ts). Adding or removing a factor needs the account's password
 * (a stolen session alone must not lock the owner out, or let a thief in without a code); removing
 * TOTP needs a code too. The first factor confirmed comes with ten recovery codes, shown once, and
 * frees the sessions that MFA_REQUIRED_FOR held back. These routes are open to such a session.
 */
import { recordAudit } from '../audit/writer.ts';
import type { Tx } from '../db/transaction.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import { clientIp } from '../http/client-ip.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';
import type { RouteModule } from '../http/route.ts';
import { ownRecord } from '../http/subject.ts';
import type { Principal } from '../principal.ts';
import type { Services } from '../services.ts';
import { confirmPasswordForFactors, isTotpCode, openTotpSecret, newRecoveryCodes, newTotpSecret, totpStepOf } from './mfa.ts';
import {
  confirmTotp,
  countUnusedRecoveryCodes,
  deleteRecoveryCodes,
  deleteTotp,
  findTotp,
  findWebauthnCredentials,
  hasSecondFactor,
  replaceRecoveryCodes,
  spendRecoveryCode,
  startTotp,
  takeTotpStep,
  type WebauthnCredentialRow,
} from './mfa.store.ts';
import { userTarget } from './session-revocation.ts';
import { clearEnrolmentPendingOfUser } from './sessions.store.ts';
import { findUserById, type UserRow } from './users.store.ts';

export const passwordSchema = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const codeSchema = { type: 'string', minLength: 1, maxLength: 64 } as const;
export const RECOVERY_CODES_SCHEMA = { type: 'array', items: { type: 'string' }, minItems: 10, maxItems: 10 } as const;

export const PASSKEY_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    createdAt: { type: 'string' },
    lastUsedAt: { type: ['string', 'null'] },
  },
  required: ['id', 'name', 'createdAt', 'lastUsedAt'],
} as const;

const MFA_STATE_SCHEMA = {
  type: 'object',
  properties: {
    totp: {
      type: 'object',
      properties: { enabled: { type: 'boolean' }, pending: { type: 'boolean' } },
      required: ['enabled', 'pending'],
    },
    passkeys: { type: 'array', items: PASSKEY_SCHEMA },
    recoveryCodesLeft: { type: 'integer', minimum: 0 },
    enrolmentRequired: { type: 'boolean' },
    passkeysAvailable: { type: 'boolean' },
  },
  required: ['totp', 'passkeys', 'recoveryCodesLeft', 'enrolmentRequired', 'passkeysAvailable'],
} as const;

/**
 * The longest field of a credential's `response` (base64url): a registration's attestation object
 * with its certificate chain is a few KiB. @simplewebauthn decodes the CBOR of attestationObject
 * (and of authenticatorData's extensions) on the event loop: an array of 700,000 items in a 1 MiB
 * body took it 0.3–0.6 s; 16 KiB of anything takes it about 6 ms.
 */
export const MAX_WEBAUTHN_FIELD_LENGTH = 16_384;
const webauthnField = { type: 'string', maxLength: MAX_WEBAUTHN_FIELD_LENGTH } as const;

/** A browser's JSON of a WebAuthn credential (@simplewebauthn/browser's output); the library checks the rest. */
export const webauthnResponseSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 2048 },
    rawId: { type: 'string', minLength: 1, maxLength: 2048 },
    type: { type: 'string', enum: ['public-key'] },
    response: {
      type: 'object',
      maxProperties: 20,
      properties: {
        clientDataJSON: webauthnField,
        attestationObject: webauthnField,
        authenticatorData: webauthnField,
        signature: webauthnField,
        userHandle: webauthnField,
        publicKey: webauthnField,
      },
    },
    clientExtensionResults: { type: 'object', maxProperties: 20 },
    authenticatorAttachment: { type: 'string', maxLength: 40 },
  },
  required: ['id', 'rawId', 'type', 'response'],
} as const;

export const presentPasskey = (row: WebauthnCredentialRow) => ({
  id: row.id,
  name: row.name,
  createdAt: new Date(Number(row.created_at)).toISOString(),
  lastUsedAt: row.last_used_at === null ? null : new Date(Number(row.last_used_at)).toISOString(),
});

export async function signedInUser(services: Services, principal: Principal): Promise<UserRow> {
  const user = await findUserById(services.db, principal.user.id);
  if (!user) throw new NotFoundError('user not found');
  return user;
}

/**
 * After a factor was added in `tx`: the user's first one brings ten recovery codes (returned to be
 * shown once) and frees their sessions held back by MFA_REQUIRED_FOR.
 */
export async function afterFactorAdded(tx: Tx, user: UserRow, hadFactor: boolean, now: number): Promise<string[] | undefined> {
  await clearEnrolmentPendingOfUser(tx.db, user.id);
  if (hadFactor) return undefined;
  const codes = newRecoveryCodes();
  await replaceRecoveryCodes(tx.db, user.id, codes, now);
  return codes;
}

/** After a factor was removed in `tx`: with none left, the recovery codes go too (they stand in for a factor). */
export async function afterFactorRemoved(tx: Tx, userId: string): Promise<void> {
  if (!(await hasSecondFactor(tx.db, userId))) await deleteRecoveryCodes(tx.db, userId);
}

export const currentUserMfaRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/user/mfa',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary: "The signed-in user's second factors: TOTP, passkeys, how many recovery codes are left, whether one must be enrolled.",
    responses: { 200: MFA_STATE_SCHEMA },
    async handler({ ctx, principal, services, authorize }) {
      await authorize('users:read', ownRecord(principal));
      const [totp, passkeys, recoveryCodesLeft] = await Promise.all([
        findTotp(services.db, principal.user.id),
        findWebauthnCredentials(services.db, principal.user.id),
        countUnusedRecoveryCodes(services.db, principal.user.id),
      ]);
      ctx.body = {
        totp: { enabled: !!totp && totp.confirmed_at !== null, pending: !!totp && totp.confirmed_at === null },
        passkeys: passkeys.map(presentPasskey),
        recoveryCodesLeft,
        enrolmentRequired: principal.mfaEnrolmentPending === true,
        passkeysAvailable: services.config.rootUrl !== null,
      };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/mfa/totp',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary:
      'Starts TOTP enrolment (needs the password): a new secret and its otpauth:// URI, shown this once; confirm it with a code at POST /api/user/mfa/totp/verify.',
    body: { type: 'object', properties: { password: passwordSchema }, required: ['password'], additionalProperties: false },
    responses: {
      201: { type: 'object', properties: { secret: { type: 'string' }, uri: { type: 'string' } }, required: ['secret', 'uri'] },
    },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const user = await signedInUser(services, principal);
      await confirmPasswordForFactors(services, clientIp(ctx), user, body.password);
      const { secret, uri } = newTotpSecret(user.login);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        if (!(await startTotp(tx.db, user.id, services.secretBox.seal(secret), now))) {
          throw new ConflictError('TOTP is enabled already: remove it first (DELETE /api/user/mfa/totp) to enrol a new one');
        }
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'user.mfa_totp_started', target: userTarget(user) }, now);
      });
      ctx.status = 201;
      ctx.body = { secret, uri };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/mfa/totp/verify',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary: "Confirms TOTP enrolment with a code of the new secret; the user's first factor comes with ten recovery codes, shown this once.",
    body: { type: 'object', properties: { code: codeSchema }, required: ['code'], additionalProperties: false },
    responses: {
      200: { type: 'object', properties: { message: { type: 'string' }, recoveryCodes: RECOVERY_CODES_SCHEMA }, required: ['message'] },
    },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const user = await signedInUser(services, principal);
      const totp = await findTotp(services.db, user.id);
      if (!totp || totp.confirmed_at !== null) throw new BadRequestError('no TOTP enrolment is pending: start one with POST /api/user/mfa/totp');
      const now = services.clock.now();
      const step = totpStepOf(openTotpSecret(services.secretBox, totp.secret_sealed), body.code.replace(/\s/g, ''), now);
      if (step === null) throw new BadRequestError('the code is not correct: check the time of the device that shows it');
      const recoveryCodes = await services.transact(async (tx) => {
        const hadFactor = await hasSecondFactor(tx.db, user.id);
        if (!(await confirmTotp(tx.db, user.id, step, now))) throw new BadRequestError('no TOTP enrolment is pending: start one with POST /api/user/mfa/totp');
        const codes = await afterFactorAdded(tx, user, hadFactor, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'user.mfa_totp_enabled', target: userTarget(user), metadata: { recoveryCodesIssued: codes !== undefined } },
          now,
        );
        return codes;
      });
      ctx.body = { message: 'TOTP enabled', ...(recoveryCodes && { recoveryCodes }) };
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/user/mfa/totp',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary: 'Removes TOTP: needs the password and a current code (or a recovery code).',
    body: { type: 'object', properties: { password: passwordSchema, code: codeSchema }, required: ['password', 'code'], additionalProperties: false },
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const user = await signedInUser(services, principal);
      const totp = await findTotp(services.db, user.id);
      if (!totp || totp.confirmed_at === null) throw new NotFoundError('TOTP is not enabled');
      await confirmPasswordForFactors(services, clientIp(ctx), user, body.password);
      const now = services.clock.now();
      const code = body.code.replace(/\s/g, '');
      const step = isTotpCode(code) ? totpStepOf(openTotpSecret(services.secretBox, totp.secret_sealed), code, now) : null;
      await services.transact(async (tx) => {
        const accepted = isTotpCode(code) ? step !== null && (await takeTotpStep(tx.db, user.id, step)) : await spendRecoveryCode(tx.db, user.id, code, now);
        if (!accepted) throw new BadRequestError('the code is not correct, or was used already');
        await deleteTotp(tx.db, user.id);
        await afterFactorRemoved(tx, user.id);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'user.mfa_totp_removed', target: userTarget(user) }, now);
      });
      ctx.body = { message: 'TOTP removed' };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/mfa/recovery-codes',
    access: 'authenticated',
    level: 'server',
    summary: 'Replaces the recovery codes with ten new ones, shown this once (needs the password and a second factor enrolled).',
    body: { type: 'object', properties: { password: passwordSchema }, required: ['password'], additionalProperties: false },
    responses: { 200: { type: 'object', properties: { recoveryCodes: RECOVERY_CODES_SCHEMA }, required: ['recoveryCodes'] } },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const user = await signedInUser(services, principal);
      if (!(await hasSecondFactor(services.db, user.id))) throw new BadRequestError('enrol a second factor first: recovery codes stand in for one');
      await confirmPasswordForFactors(services, clientIp(ctx), user, body.password);
      const now = services.clock.now();
      const codes = newRecoveryCodes();
      await services.transact(async (tx) => {
        await replaceRecoveryCodes(tx.db, user.id, codes, now);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'user.mfa_recovery_codes_replaced', target: userTarget(user) }, now);
      });
      ctx.body = { recoveryCodes: codes };
    },
  });
};
