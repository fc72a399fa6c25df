/**
 * The signed-in user's passkeys (`/api/user/mfa/webauthn…`): registering one takes the password
 * at its options step, and the browser's answer once, for those options; removing one takes the
 * password. The user's first factor comes with recovery codes, as in user.mfa.routes.ts.
 */
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { recordAudit } from '../audit/writer.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import { clientIp } from '../http/client-ip.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';
import type { RouteModule } from '../http/route.ts';
import { ownRecord } from '../http/subject.ts';
import { confirmPasswordForFactors, NO_PASSWORD_LOGIN, passwordKindOf } from './mfa.ts';
import {
  deleteWebauthnCredential,
  findWebauthnCredentials,
  hasSecondFactor,
  insertWebauthnCredential,
  savePendingRegistration,
  takePendingRegistration,
} from './mfa.store.ts';
import { CEREMONY_TIMEOUT_MS, registrationOptions, relyingParty, verifiedRegistration } from './mfa-webauthn.ts';
import { userTarget } from './session-revocation.ts';
import {
  afterFactorAdded,
  afterFactorRemoved,
  PASSKEY_SCHEMA,
  passwordSchema,
  presentPasskey,
  RECOVERY_CODES_SCHEMA,
  signedInUser,
  webauthnResponseSchema,
} from './user.mfa.routes.ts';

export const currentUserPasskeyRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/user/mfa/webauthn/registration/options',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary:
      'Starts registering a passkey (needs the password): the options for navigator.credentials.create(), valid for five minutes; 404 when ROOT_URL is not set.',
    body: { type: 'object', properties: { password: passwordSchema }, required: ['password'], additionalProperties: false },
    responses: { 200: { type: 'object', additionalProperties: true } },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const rp = relyingParty(services.config);
      const user = await signedInUser(services, principal);
      await confirmPasswordForFactors(services, clientIp(ctx), user, body.password);
      const options = await registrationOptions(rp, user, await findWebauthnCredentials(services.db, user.id));
      const now = services.clock.now();
      await savePendingRegistration(services.db, user.id, options.challenge, now + CEREMONY_TIMEOUT_MS);
      ctx.body = options;
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/mfa/webauthn/registration',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary: "Finishes registering a passkey with the browser's answer to the options; the user's first factor comes with ten recovery codes, shown this once.",
    body: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, credential: webauthnResponseSchema },
      required: ['credential'],
      additionalProperties: false,
    },
    responses: {
      201: { type: 'object', properties: { passkey: PASSKEY_SCHEMA, recoveryCodes: RECOVERY_CODES_SCHEMA }, required: ['passkey'] },
    },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const rp = relyingParty(services.config);
      const user = await signedInUser(services, principal);
      if (!(await passwordKindOf(services, user))) throw new BadRequestError(NO_PASSWORD_LOGIN);
      const now = services.clock.now();
      const challenge = await takePendingRegistration(services.db, user.id, now);
      if (!challenge) throw new BadRequestError('no passkey registration is pending: start one with POST /api/user/mfa/webauthn/registration/options');
      const verified = await verifiedRegistration(rp, challenge, body.credential as unknown as RegistrationResponseJSON);
      const created = await services.transact(async (tx) => {
        const hadFactor = await hasSecondFactor(tx.db, user.id);
        const name = body.name ?? 'passkey';
        const id = await insertWebauthnCredential(tx.db, { ...verified, userId: user.id, name }, now);
        const codes = await afterFactorAdded(tx, user, hadFactor, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'user.mfa_passkey_added', target: userTarget(user), metadata: { passkeyId: id, name, recoveryCodesIssued: codes !== undefined } },
          now,
        );
        const [row] = (await findWebauthnCredentials(tx.db, user.id)).filter((credential) => credential.id === id);
        return { passkey: presentPasskey(row!), codes };
      });
      ctx.status = 201;
      ctx.body = { passkey: created.passkey, ...(created.codes && { recoveryCodes: created.codes }) };
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/user/mfa/webauthn/:passkeyId',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary: 'Removes one of your passkeys (needs the password).',
    params: { type: 'object', properties: { passkeyId: { type: 'string', minLength: 1, maxLength: 40 } }, required: ['passkeyId'] },
    body: { type: 'object', properties: { password: passwordSchema }, required: ['password'], additionalProperties: false },
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const user = await signedInUser(services, principal);
      await confirmPasswordForFactors(services, clientIp(ctx), user, body.password);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const removed = await deleteWebauthnCredential(tx.db, user.id, params.passkeyId);
        if (!removed) throw new NotFoundError('passkey not found');
        await afterFactorRemoved(tx, user.id);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'user.mfa_passkey_removed', target: userTarget(user), metadata: { passkeyId: removed.id, name: removed.name } },
          now,
        );
      });
      ctx.body = { message: 'passkey removed' };
    },
  });
};
