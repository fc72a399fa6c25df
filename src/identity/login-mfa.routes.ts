/**
 * The second step of a password login (local or LDAP) of an account with a second factor. The
 * password step answers 401 `{message, mfaRequired: true, challenge}` instead of a session; the
 * challenge names the user and this login, is signed with a key derived from SECRET_KEY, lives
 * five minutes and is spent by the login it completes. `POST /api/login/mfa` takes it with a
 * TOTP code, a recovery code, or a passkey's assertion (its options from
 * `POST /api/login/mfa/webauthn/options`), and completes the login as the password step would.
 *
 * Every attempt takes a slot of the account's login lockout, and the password step's slot stays
 * taken until the second factor is given, so knowing the password buys no extra guesses at codes.
 * A TOTP code is taken once (the stored time step), a recovery code once, a passkey's signature
 * counter must grow.
 */
import type { Context } from 'koa';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { recordAudit, recordFailure, type Actor } from '../audit/writer.ts';
import { BadRequestError, UnauthorizedError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import { clientIp } from '../http/client-ip.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import { completeLogin } from './login-completion.ts';
import { clearAttempts } from './lockout.ts';
import {
  isTotpCode,
  openTotpSecret,
  LOGIN_CHALLENGE_TTL_MS,
  MAX_CHALLENGE_FAILURES,
  readLoginChallenge,
  signLoginChallenge,
  takeSecondFactorSlot,
  totpStepOf,
  WRONG_CODE,
} from './mfa.ts';
import {
  countLoginChallengeFailure,
  findLoginChallenge,
  findTotp,
  findWebauthnCredentialOfUser,
  findWebauthnCredentials,
  insertLoginChallenge,
  recordWebauthnUse,
  setLoginWebauthnChallenge,
  spendLoginChallenge,
  spendRecoveryCode,
  takeTotpStep,
  type LoginChallengeRow,
} from './mfa.store.ts';
import { authenticationOptions, relyingParty, verifiedAssertion } from './mfa-webauthn.ts';
import { webauthnResponseSchema } from './user.mfa.routes.ts';
import { findUserById, type UserRow } from './users.store.ts';

export const MFA_REQUIRED_SCHEMA = {
  type: 'object',
  properties: {
    message: { type: 'string' },
    mfaRequired: { const: true },
    challenge: { type: 'string' },
    expiresAt: { type: 'string' },
    methods: { type: 'array', items: { enum: ['totp', 'passkey', 'recovery_code'] } },
  },
  required: ['message', 'mfaRequired', 'challenge', 'expiresAt', 'methods'],
} as const;

const INVALID_CHALLENGE = 'the sign-in challenge is not valid or has expired: sign in with your password again';

/** Answers a password login of an account with a second factor: 401 with a challenge, and no session. */
export async function answerWithChallenge(ctx: Context, services: Services, user: UserRow, method: string, actor: Actor): Promise<void> {
  const now = services.clock.now();
  const expiresAt = now + LOGIN_CHALLENGE_TTL_MS;
  const [totp, passkeys] = await Promise.all([findTotp(services.db, user.id), findWebauthnCredentials(services.db, user.id)]);
  const id = await services.transact(async (tx) => {
    const challengeId = await insertLoginChallenge(tx.db, { userId: user.id, method, expiresAt }, now);
    await recordAudit(
      tx.db,
      { ...actor, type: 'user', id: user.id, name: user.login },
      { action: 'user.login_mfa_challenged', target: { type: 'user', id: user.id, name: user.login }, metadata: { method } },
      now,
    );
    return challengeId;
  });
  const methods = [
    ...(totp && totp.confirmed_at !== null ? ['totp'] : []),
    ...(passkeys.length > 0 && services.config.rootUrl ? ['passkey'] : []),
    'recovery_code',
  ];
  ctx.status = 401;
  ctx.body = {
    message: 'a second factor is required: send a code (or a passkey assertion) with this challenge to POST /api/login/mfa',
    mfaRequired: true,
    challenge: signLoginChallenge(services.config, id, user.id, expiresAt),
    expiresAt: new Date(expiresAt).toISOString(),
    methods,
  };
}

/** The live challenge a token names, or a 401. */
async function liveChallenge(services: Services, token: string): Promise<LoginChallengeRow> {
  const now = services.clock.now();
  const read = readLoginChallenge(services.config, token, now);
  const row = read && (await findLoginChallenge(services.db, read.id));
  if (!read || !row || row.user_id !== read.userId || row.used_at !== null || Number(row.expires_at) <= now || row.failures >= MAX_CHALLENGE_FAILURES) {
    throw new UnauthorizedError(INVALID_CHALLENGE);
  }
  return row;
}

/** A second factor that did not prove the user: counted against the challenge and audited by the caller. */
class WrongSecondFactor extends UnauthorizedError {
  constructor(readonly reason: string) {
    super(WRONG_CODE);
  }
}

type Proof = { kind: 'totp'; step: number } | { kind: 'recovery_code'; code: string } | { kind: 'passkey'; credentialRowId: string; counter: number };

/** What the user gave, checked (no state changes yet); a WrongSecondFactor when it proves nothing. */
async function checkProof(
  services: Services,
  challenge: LoginChallengeRow,
  given: { code?: string; credential?: AuthenticationResponseJSON },
  now: number,
): Promise<Proof> {
  if (given.credential) {
    const rp = relyingParty(services.config);
    if (!challenge.webauthn_challenge) throw new WrongSecondFactor('no passkey options were asked for this challenge');
    const credential = await findWebauthnCredentialOfUser(services.db, challenge.user_id, given.credential.id);
    if (!credential) throw new WrongSecondFactor('unknown passkey');
    const counter = await verifiedAssertion(rp, challenge.webauthn_challenge, credential, given.credential);
    if (counter === null) throw new WrongSecondFactor('passkey assertion not valid');
    return { kind: 'passkey', credentialRowId: credential.id, counter };
  }
  const code = (given.code ?? '').replace(/\s/g, '');
  if (!isTotpCode(code)) return { kind: 'recovery_code', code };
  const totp = await findTotp(services.db, challenge.user_id);
  const step = totp && totp.confirmed_at !== null ? totpStepOf(openTotpSecret(services.secretBox, totp.secret_sealed), code, now) : null;
  if (step === null) throw new WrongSecondFactor('wrong code');
  return { kind: 'totp', step };
}

export const loginMfaRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/login/mfa/webauthn/options',
    access: 'public',
    beforeMfaEnrolment: true,
    summary: "A login's passkey step: the options for navigator.credentials.get() for the challenge's user (404 when ROOT_URL is not set).",
    body: {
      type: 'object',
      properties: { challenge: { type: 'string', minLength: 1, maxLength: 300 } },
      required: ['challenge'],
      additionalProperties: false,
    },
    responses: { 200: { type: 'object', additionalProperties: true } },
    async handler({ ctx, body, services }) {
      const rp = relyingParty(services.config);
      const challenge = await liveChallenge(services, body.challenge);
      const credentials = await findWebauthnCredentials(services.db, challenge.user_id);
      if (credentials.length === 0) throw new UnauthorizedError('this account has no passkey: give a code instead');
      const options = await authenticationOptions(rp, credentials);
      await setLoginWebauthnChallenge(services.db, challenge.id, options.challenge);
      ctx.body = options;
    },
  });

  routes.add({
    method: 'post',
    path: '/api/login/mfa',
    access: 'public',
    beforeMfaEnrolment: true,
    summary:
      "Completes a password login that answered mfaRequired: its challenge with a TOTP code, a recovery code, or a passkey's assertion; sets the session cookie.",
    query: { type: 'object', properties: { redirect: { type: 'string', maxLength: 2048 } } },
    body: {
      type: 'object',
      properties: {
        challenge: { type: 'string', minLength: 1, maxLength: 300 },
        code: { type: 'string', minLength: 1, maxLength: 64 },
        credential: webauthnResponseSchema,
      },
      required: ['challenge'],
      additionalProperties: false,
    },
    responses: {
      200: {
        type: 'object',
        properties: { message: { type: 'string' }, redirectUrl: { type: 'string' } },
        required: ['message', 'redirectUrl'],
      },
    },
    async handler({ ctx, body, query, services }) {
      if ((body.code === undefined) === (body.credential === undefined))
        throw new BadRequestError('give either code (TOTP or recovery code) or credential (a passkey assertion)');
      const actor = actorOf(ctx);
      const challenge = await liveChallenge(services, body.challenge);
      const user = await findUserById(services.db, challenge.user_id);
      if (!user || Number(user.is_disabled) || Number(user.is_service_account)) throw new UnauthorizedError(INVALID_CHALLENGE);
      const provider = challenge.method === 'ldap' ? 'ldap' : 'local';
      const now = services.clock.now();
      const lockout = await takeSecondFactorSlot(services.db, clientIp(ctx), user.id, now).catch(async (err: unknown) => {
        services.metrics.login(provider, 'locked_out');
        await failed('locked out');
        throw err;
      });

      async function failed(reason: string): Promise<void> {
        await recordFailure(services, actor, {
          action: 'user.login_failed',
          target: { type: 'user', id: user!.id, name: user!.login },
          metadata: { method: challenge.method, reason: `second factor: ${reason}` },
        });
      }

      try {
        const proof = await checkProof(
          services,
          challenge,
          { code: body.code, credential: body.credential as unknown as AuthenticationResponseJSON | undefined },
          now,
        );
        await completeLogin(ctx, services, {
          method: challenge.method,
          secondFactor: proof.kind,
          actor,
          async user(tx) {
            if (!(await spendLoginChallenge(tx.db, challenge.id, now))) throw new UnauthorizedError(INVALID_CHALLENGE);
            const taken =
              proof.kind === 'totp'
                ? await takeTotpStep(tx.db, user.id, proof.step)
                : proof.kind === 'recovery_code'
                  ? await spendRecoveryCode(tx.db, user.id, proof.code, now)
                  : await recordWebauthnUse(tx.db, proof.credentialRowId, proof.counter, now);
            if (!taken) throw new WrongSecondFactor(proof.kind === 'recovery_code' ? 'wrong or used recovery code' : `${proof.kind} used already`);
            return user;
          },
          answer: { kind: 'form', redirect: query.redirect },
        });
      } catch (err) {
        if (err instanceof WrongSecondFactor) {
          await countLoginChallengeFailure(services.db, challenge.id);
          services.metrics.login(provider, 'failure');
          await failed(err.reason);
        }
        throw err;
      }
      await clearAttempts(services.db, lockout);
      services.metrics.login(provider, 'success');
    },
  });
};
