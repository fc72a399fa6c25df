/**
 * Local and LDAP login, logout, and the list of login providers. Every way a login can fail
 * (wrong password, unknown user, disabled user, service account, an LDAP refusal) gives the same
 * 401 with the same message, so the answer reveals nothing; a local check always costs one scrypt.
 *
 * The order: an account with a local password is checked against it, and only against it; with
 * LDAP enabled, any other login (unknown here, or an account without a local password) is checked
 * against the LDAP servers (providers/ldap). The lockout counts both alike.
 */
import type { Context } from 'koa';
import { recordAudit, recordFailure, type Actor } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { verifyPassword } from '../crypto/password.ts';
import { ForbiddenError, ServiceUnavailableError, UnauthorizedError } from '../errors.ts';
import { clientIp } from '../http/client-ip.ts';
import { refuseCrossSiteNavigation } from '../http/csrf.ts';
import { safeRedirect } from '../http/redirect.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import { clearAttempts, giveBackAttemptSlot, lockedOut, lockoutKey, takeAttemptSlot } from './lockout.ts';
import type { Principal } from '../principal.ts';
import { clearSessionCookie } from './sessions.ts';
import { completeLogin } from './login-completion.ts';
import { revokeSession } from './sessions.store.ts';
import { signInWithLdap } from './providers/ldap/login.ts';
import { findUserByLoginOrEmail, type UserRow } from './users.store.ts';
import { answerWithChallenge, MFA_REQUIRED_SCHEMA } from './login-mfa.routes.ts';
import { mfaRequiredFor } from './mfa.ts';
import { hasSecondFactor } from './mfa.store.ts';
import { markSessionEnrolmentPending } from './sessions.store.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

export const INVALID_CREDENTIALS = 'invalid username or password';

/**
 * Every login provider of the spec with its enabled flag and where a browser starts it
 * (`/api/login/<id>`, local too), each enabled when configured: the OAuth ones and SAML by
 * their variables, LDAP by its file while the form is open (its logins go through the form).
 */
const EXTERNAL_PROVIDERS = [
  { id: 'codehost', name: 'Code host (OAuth 2.0)' },
  { id: 'workspace', name: 'Workspace identity provider (OAuth 2.0)' },
  { id: 'generic', name: 'OpenID Connect' },
  { id: 'saml', name: 'SAML' },
  { id: 'ldap', name: 'LDAP' },
] as const;

function loginProviders(services: Services) {
  const isConfigured = (id: (typeof EXTERNAL_PROVIDERS)[number]['id']) => {
    // LDAP logins go through the local form, so the form must be open for LDAP to be usable.
    if (id === 'ldap') return !!services.ldap && !services.config.disableLoginForm;
    if (id === 'saml') return services.config.saml !== null;
    return !!services.loginProviders.get(id);
  };
  return [
    { id: 'local', name: 'Username and password', enabled: !services.config.disableLoginForm },
    ...EXTERNAL_PROVIDERS.map((provider) => ({ ...provider, enabled: isConfigured(provider.id) })),
  ].map((provider) => ({ ...provider, url: `/api/login/${provider.id}` }));
}

const redirectQuery = { type: 'object', properties: { redirect: { type: 'string', maxLength: 2048 } } } as const;

const LOGIN_PROVIDERS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      id: { enum: ['local', ...EXTERNAL_PROVIDERS.map((provider) => provider.id)] },
      name: { type: 'string' },
      enabled: { type: 'boolean' },
      url: { type: 'string' },
    },
    required: ['id', 'name', 'enabled', 'url'],
  },
} as const;

/** The login page, carrying a same-site `redirect` on to it. */
function loginPage(redirect: string | undefined): string {
  const target = safeRedirect(redirect);
  return target === '/' ? '/login' : `/login?${new URLSearchParams({ redirect: target })}`;
}

type LoginMethod = 'password' | 'ldap';

function recordLoginFailure(services: Services, actor: Actor, login: string, method: LoginMethod, reason: string, userId: string | null): Promise<void> {
  return recordFailure(services, actor, {
    action: 'user.login_failed',
    target: { type: 'user', id: userId, name: login.slice(0, 190) },
    metadata: { method, reason },
  });
}

function refusal(user: UserRow | undefined, passwordMatches: boolean): string | null {
  if (!user) return 'unknown user';
  if (!passwordMatches) return 'wrong password';
  if (user.is_service_account) return 'service account';
  if (user.is_disabled) return 'disabled user';
  return null;
}

/** By the order above: LDAP checks every login that names no account with a local password. */
const methodFor = (services: Services, user: UserRow | undefined): LoginMethod =>
  services.ldap && !user?.password_hash && !user?.is_service_account ? 'ldap' : 'password';

type CheckedLogin = { user: UserRow; refused?: undefined } | { refused: string; userId: string | null };

/** Whose login this is; the refusal says why not (for the audit log only). */
async function checkCredentials(
  services: Services,
  actor: Actor,
  method: LoginMethod,
  user: UserRow | undefined,
  body: { user: string; password: string },
): Promise<CheckedLogin> {
  if (method === 'ldap') return signInWithLdap(services, actor, body.user, body.password);
  const refused = refusal(user, await verifyPassword(body.password, user?.password_hash ?? null));
  return refused || !user ? { refused: refused ?? 'unknown user', userId: user?.id ?? null } : { user };
}

export const loginRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/login/providers',
    access: 'public',
    beforeMfaEnrolment: true,
    summary: 'The login providers: each with its enabled flag and where a browser starts it.',
    responses: { 200: LOGIN_PROVIDERS_SCHEMA },
    async handler({ ctx, services }) {
      ctx.body = loginProviders(services);
    },
  });

  // Where the providers list sends a browser for the local and the LDAP login: the login page and its form.
  for (const provider of ['local', 'ldap']) {
    routes.add({
      method: 'get',
      path: `/api/login/${provider}`,
      access: 'public',
      beforeMfaEnrolment: true,
      query: redirectQuery,
      summary: `Starts a ${provider === 'local' ? 'local' : 'LDAP'} login: redirects to the login page, carrying the redirect.`,
      responses: { 302: null },
      async handler({ ctx, query }) {
        ctx.redirect(loginPage(query.redirect));
      },
    });
  }

  routes.add({
    method: 'post',
    path: '/api/login',
    access: 'public',
    body: {
      type: 'object',
      properties: {
        user: { type: 'string', minLength: 1, maxLength: 190 },
        // an empty password is a failed login (401, counted), never a bind without credentials
        password: { type: 'string', maxLength: 1024 },
      },
      required: ['user', 'password'],
      additionalProperties: false,
    },
    query: redirectQuery,
    summary:
      'Signs in with a login (or email) and password, local or LDAP; sets the session cookie. An account with a second factor gets 401 {mfaRequired: true, challenge} instead: complete it at POST /api/login/mfa.',
    beforeMfaEnrolment: true,
    responses: {
      200: {
        type: 'object',
        properties: { message: { type: 'string' }, redirectUrl: { type: 'string' }, mfaEnrolmentRequired: { const: true } },
        required: ['message', 'redirectUrl'],
      },
      401: MFA_REQUIRED_SCHEMA,
    },
    async handler({ ctx, body, query, services }) {
      if (services.config.disableLoginForm) throw new ForbiddenError('password login is disabled on this server');
      const actor = actorOf(ctx);
      // The account is looked up before the slot is taken, so that its login and its email
      // (in any case, with any blanks) take slots from one counter.
      const user = await findUserByLoginOrEmail(services.db, body.user);
      const key = lockoutKey(clientIp(ctx), user ? { userId: user.id } : { login: body.user });
      const slot = await takeAttemptSlot(services.db, key, services.clock.now());
      const method = methodFor(services, user);
      const provider = method === 'ldap' ? 'ldap' : 'local';
      if (!slot.granted) {
        services.metrics.login(provider, 'locked_out');
        await recordLoginFailure(services, actor, body.user, method, 'locked out', user?.id ?? null);
        throw lockedOut(slot.retryAfterSeconds);
      }

      const checked = await checkCredentials(services, actor, method, user, body).catch(async (err: unknown) => {
        // too busy to check the password (PASSWORD_HASH_QUEUE full): the attempt never happened
        if (err instanceof ServiceUnavailableError) await giveBackAttemptSlot(services.db, key);
        throw err;
      });
      if (checked.refused !== undefined) {
        services.metrics.login(provider, 'failure');
        await recordLoginFailure(services, actor, body.user, method, checked.refused, checked.userId);
        throw new UnauthorizedError(INVALID_CREDENTIALS);
      }
      const signedIn = checked.user;

      if (await hasSecondFactor(services.db, signedIn.id)) {
        // The attempt keeps its lockout slot until the second factor is given (login-mfa.routes.ts).
        await answerWithChallenge(ctx, services, signedIn, method, actor);
        services.metrics.login(provider, 'mfa_required');
        return;
      }
      await clearAttempts(services.db, key);
      const mfaEnrolmentRequired = mfaRequiredFor(services.config, signedIn);
      await completeLogin(ctx, services, {
        method,
        actor,
        user: async () => signedIn,
        ...(mfaEnrolmentRequired && { withSession: (tx, session) => markSessionEnrolmentPending(tx.db, session.sessionId) }),
        answer: { kind: 'form', redirect: query.redirect, mfaEnrolmentRequired },
      });
      services.metrics.login(provider, 'success');
    },
  });

  /** Logging out needs no permission: whoever holds the session cookie may end it. */
  const logout = async (ctx: Context, services: Services) => {
    const principal = ctx.state.principal as Principal | undefined;
    if (principal?.sessionId) {
      const now = services.clock.now();
      await services.transact(async (tx) => {
        if (await revokeSession(tx.db, principal.sessionId!, now)) {
          await recordAudit(tx.db, actorOf(ctx, principal), { action: 'user.logout', target: { type: 'session', id: principal.sessionId } }, now);
        }
      });
    }
    clearSessionCookie(ctx, services.config);
  };

  routes.add({
    method: 'post',
    path: '/api/logout',
    access: 'public',
    beforeMfaEnrolment: true,
    summary: 'Ends the session of the cookie, if any, and clears the cookie.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, services }) {
      await logout(ctx, services);
      ctx.body = { message: 'logged out' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/logout',
    access: 'public',
    beforeMfaEnrolment: true,
    summary: 'Ends the session of the cookie, if any, and redirects the browser to the login page; refused (403) when another site started the request.',
    responses: { 302: null },
    async handler({ ctx, services }) {
      refuseCrossSiteNavigation(ctx, services.config.corsOrigins);
      await logout(ctx, services);
      ctx.redirect('/login');
    },
  });
};
