/**
 * Local login and logout, and the list of login providers. Every way a login can fail (wrong
 * password, unknown user, disabled user, service account) gives the same 401 with the same
 * message after the same work (one scrypt), so the answer reveals nothing.
 */
import type { Context } from 'koa';
import { recordAudit, recordFailure, type Actor } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { verifyPassword } from '../crypto/password.ts';
import { ForbiddenError, UnauthorizedError } from '../errors.ts';
import { clientIp } from '../http/client-ip.ts';
import { safeRedirect } from '../http/redirect.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import { clearAttempts, lockedOut, lockoutKey, takeAttemptSlot } from './lockout.ts';
import type { Principal } from './principal.ts';
import { clearSessionCookie, issueSession, setSessionCookie } from './sessions.ts';
import { revokeSession } from './sessions.store.ts';
import { findMembershipsOfUser, findUserByLoginOrEmail, markUserSeen, type UserRow } from './users.store.ts';

export const INVALID_CREDENTIALS = 'invalid username or password';

/**
 * Every login provider of the spec with its enabled flag and where a browser starts it
 * (`/api/login/<id>`, local too). SAML is enabled when configured; the others (OAuth, LDAP) are
 * listed disabled until their flows are part of the service.
 */
const EXTERNAL_PROVIDERS = [
  { id: 'codehost', name: 'Code host (OAuth 2.0)' },
  { id: 'workspace', name: 'Workspace identity provider (OAuth 2.0)' },
  { id: 'generic', name: 'OpenID Connect' },
  { id: 'saml', name: 'SAML' },
  { id: 'ldap', name: 'LDAP' },
];

function loginProviders(services: Services) {
  return [
    { id: 'local', name: 'Username and password', enabled: !services.config.disableLoginForm },
    ...EXTERNAL_PROVIDERS.map((provider) => ({ ...provider, enabled: provider.id === 'saml' && services.config.saml !== null })),
  ].map((provider) => ({ ...provider, url: `/api/login/${provider.id}` }));
}

const redirectQuery = { type: 'object', properties: { redirect: { type: 'string', maxLength: 2048 } } } as const;

/** The login page, carrying a same-site `redirect` on to it. */
function loginPage(redirect: string | undefined): string {
  const target = safeRedirect(redirect);
  return target === '/' ? '/login' : `/login?${new URLSearchParams({ redirect: target })}`;
}

function recordLoginFailure(services: Services, actor: Actor, login: string, reason: string, userId: string | null): Promise<void> {
  return recordFailure(services, actor, {
    action: 'user.login_failed',
    target: { type: 'user', id: userId, name: login.slice(0, 190) },
    metadata: { method: 'password', reason },
  });
}

function refusal(user: UserRow | undefined, passwordMatches: boolean): string | null {
  if (!user) return 'unknown user';
  if (!passwordMatches) return 'wrong password';
  if (user.is_service_account) return 'service account';
  if (user.is_disabled) return 'disabled user';
  return null;
}

export const loginRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/login/providers',
    access: 'public',
    async handler({ ctx, services }) {
      ctx.body = loginProviders(services);
    },
  });

  // Where the providers list sends a browser for the local login: the login page and its form.
  routes.add({
    method: 'get',
    path: '/api/login/local',
    access: 'public',
    query: redirectQuery,
    async handler({ ctx, query }) {
      ctx.redirect(loginPage(query.redirect));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/login',
    access: 'public',
    body: {
      type: 'object',
      properties: {
        user: { type: 'string', minLength: 1, maxLength: 190 },
        password: { type: 'string', minLength: 1, maxLength: 1024 },
      },
      required: ['user', 'password'],
      additionalProperties: false,
    },
    query: redirectQuery,
    async handler({ ctx, body, query, services }) {
      if (services.config.disableLoginForm) throw new ForbiddenError('password login is disabled on this server');
      const actor = actorOf(ctx);
      // The account is looked up before the slot is taken, so that its login and its email
      // (in any case, with any blanks) take slots from one counter.
      const user = await findUserByLoginOrEmail(services.db, body.user);
      const key = lockoutKey(clientIp(ctx), user ? { userId: user.id } : { login: body.user });
      const slot = await takeAttemptSlot(services.db, key, services.clock.now());
      if (!slot.granted) {
        await recordLoginFailure(services, actor, body.user, 'locked out', user?.id ?? null);
        throw lockedOut(slot.retryAfterSeconds);
      }

      const passwordMatches = await verifyPassword(body.password, user?.password_hash ?? null);
      const refused = refusal(user, passwordMatches);
      if (refused || !user) {
        await recordLoginFailure(services, actor, body.user, refused ?? 'unknown user', user?.id ?? null);
        throw new UnauthorizedError(INVALID_CREDENTIALS);
      }

      await clearAttempts(services.db, key);
      const now = services.clock.now();
      const orgs = await findMembershipsOfUser(services.db, user.id);
      const session = await services.transact(async (tx) => {
        const issued = await issueSession(tx, ctx, user.id, now);
        await markUserSeen(tx.db, user.id, now);
        await recordAudit(
          tx.db,
          { ...actor, type: 'user', id: user.id, name: user.login },
          {
            action: 'user.login',
            orgId: user.default_org_id ?? orgs[0]?.orgId ?? null,
            target: { type: 'session', id: issued.sessionId },
            metadata: { method: 'password' },
          },
          now,
        );
        return issued;
      });
      setSessionCookie(ctx, services.config, session.token);
      ctx.body = { message: 'logged in', redirectUrl: safeRedirect(query.redirect) };
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
    async handler({ ctx, services }) {
      await logout(ctx, services);
      ctx.body = { message: 'logged out' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/logout',
    access: 'public',
    async handler({ ctx, services }) {
      await logout(ctx, services);
      ctx.redirect('/login');
    },
  });
};
