/**
 * SAML login and single logout (SAML_ENABLED). Every route is public: the identity provider's
 * signature, not a session, vouches for what arrives. A refused answer is a 401 `{message}` and a
 * `user.login_failed` (or `saml.logout_failed`) audit entry with the reason; a malformed request
 * is a 400. Request ids live in the database, so any instance can take the answer.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { recordAudit, recordFailure } from '../../../audit/writer.ts';
import type { SamlConfig } from '../../../config.ts';
import { BadRequestError, NotFoundError, UnauthorizedError } from '../../../errors.ts';
import { actorOf } from '../../../http/actor.ts';
import { safeRedirect } from '../../../http/redirect.ts';
import type { RouteModule } from '../../../http/route.ts';
import type { Services } from '../../../services.ts';
import type { Principal } from '../../../principal.ts';
import { completeLogin } from '../../login-completion.ts';
import { clearSessionCookie } from '../../sessions.ts';
import { revokeSession } from '../../sessions.store.ts';
import { readLogoutMessage } from './logout.ts';
import { readLoginResponse } from './response.ts';
import { buildServiceProvider, type ServiceProvider } from './service-provider.ts';
import { linkSaml, profileOf, samlLoginUser } from './sign-in.ts';
import { clientIp } from '../../../http/client-ip.ts';
import { ownRecord } from '../../../http/subject.ts';
import { reauthenticateToLink } from '../../reauthenticate.ts';
import { LINK_START_BODY, LINK_START_SCHEMA, LINKING_SESSION_GONE, linkingPrincipal, refuseLink } from '../link-flow.ts';
import { ExternalLoginError } from '../types.ts';
import {
  findSamlSession,
  findSessionsOfSamlSubject,
  forgetExpiredSamlState,
  insertSamlRequest,
  insertSamlSession,
  rememberAssertionId,
  SAML_AUTH_MODULE,
  takeSamlRequest,
} from './store.ts';
import { SamlRefusal } from './xml.ts';

/** How long the identity provider may take to answer a request of ours. */
const REQUEST_LIFETIME_MS = 10 * 60_000;
/** How long an answer to a link request waits for its browser to come back. */
const LINK_CONFIRM_MS = 5 * 60_000;
/** Where the browser confirms a SAML link: a same-site GET, which carries the session cookie. */
const SAML_LINK_PATH = '/api/saml/link';
export const SAML_ACS_PATH = '/api/saml/acs';
export const SAML_SLO_CALLBACK_PATH = '/api/saml/slo/callback';
/** The endpoints the identity provider's page posts a form to. */
export const SAML_FORM_PATHS: ReadonlySet<string> = new Set([SAML_ACS_PATH, SAML_SLO_CALLBACK_PATH]);

const providers = new WeakMap<SamlConfig, ServiceProvider>();

function serviceProvider(services: Services): ServiceProvider {
  const settings = services.config.saml;
  if (!settings) throw new NotFoundError('SAML login is not enabled on this server');
  let provider = providers.get(settings);
  if (!provider) {
    provider = buildServiceProvider(settings);
    providers.set(settings, provider);
  }
  return provider;
}

const redirectQuery = { type: 'object', properties: { redirect: { type: 'string', maxLength: 2048 } } } as const;
/** Base64 of at most MAX_MESSAGE_BYTES (response.ts), with room for line breaks. */
const samlMessage = { type: 'string', minLength: 1, maxLength: 400_000 } as const;

/** A refused answer (by the SAML checks, or by the account rules): audited with its reason, a 401 with its message. */
async function refuse(services: Services, ctx: Context, action: string, err: unknown): Promise<never> {
  if (!(err instanceof SamlRefusal) && !(err instanceof ExternalLoginError)) throw err;
  await recordFailure(services, actorOf(ctx), { action, target: { type: 'saml', id: null }, metadata: { method: SAML_AUTH_MODULE, reason: err.reason } });
  throw new UnauthorizedError(err.message);
}

export const samlRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/saml/metadata',
    access: 'public',
    summary: "The service provider's SAML metadata (XML) for the identity provider.",
    responses: { 200: null },
    async handler({ ctx, services }) {
      ctx.type = 'application/samlmetadata+xml';
      ctx.body = serviceProvider(services).metadata();
    },
  });

  // Where the login providers list sends a browser for SAML.
  routes.add({
    method: 'get',
    path: '/api/login/saml',
    access: 'public',
    query: redirectQuery,
    summary: 'Where the login providers list sends a browser for SAML: redirects to /api/saml/login.',
    responses: { 302: null },
    async handler({ ctx, query, services }) {
      serviceProvider(services);
      const target = safeRedirect(query.redirect);
      ctx.redirect(target === '/' ? '/api/saml/login' : `/api/saml/login?${new URLSearchParams({ redirect: target })}`);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/saml/login',
    access: 'public',
    query: redirectQuery,
    summary: 'Starts a SAML login: redirects to the identity provider with a new AuthnRequest.',
    responses: { 302: null },
    async handler({ ctx, query, services }) {
      const request = serviceProvider(services).loginRequest();
      const now = services.clock.now();
      await insertSamlRequest(services.db, { id: request.id, kind: 'login', redirect: safeRedirect(query.redirect), expiresAt: now + REQUEST_LIFETIME_MS });
      ctx.redirect(request.url);
    },
  });

  routes.add({
    method: 'post',
    path: SAML_ACS_PATH,
    access: 'public',
    body: { type: 'object', properties: { SAMLResponse: samlMessage, RelayState: { type: 'string', maxLength: 2048 } }, required: ['SAMLResponse'] },
    summary: "Assertion consumer service: signs in with the identity provider's response and redirects on.",
    responses: { 302: null },
    async handler({ ctx, body, services }) {
      const { settings } = serviceProvider(services);
      const now = services.clock.now();
      try {
        const assertion = await readLoginResponse(settings, body.SAMLResponse, now);
        await forgetExpiredSamlState(services.db, now);
        if (!(await rememberAssertionId(services.db, assertion.assertionId, assertion.expiresAt))) throw new SamlRefusal('replayed assertion');
        const request = await takeSamlRequest(services.db, assertion.inResponseTo, ['login', 'link'], now);
        if (!request) throw new SamlRefusal('InResponseTo names no open login request of this service');
        if (request.kind === 'link') {
          // The identity provider's page posts across sites, so the SameSite=Lax session cookie
          // is not here: the answer waits for the browser's next, top-level GET, which carries it.
          const ticket = randomBytes(24).toString('base64url');
          const { redirect, sessionId } = request;
          await insertSamlRequest(services.db, { id: ticket, kind: 'linked', redirect, sessionId, nameId: assertion.nameId, expiresAt: now + LINK_CONFIRM_MS });
          return ctx.redirect(`${SAML_LINK_PATH}?${new URLSearchParams({ ticket })}`);
        }
        const actor = actorOf(ctx);
        const profile = profileOf(assertion, settings.attributeMapping);
        await completeLogin(ctx, services, {
          method: SAML_AUTH_MODULE,
          actor,
          user: samlLoginUser(services, actor, profile),
          withSession: (tx, session) =>
            insertSamlSession(tx.db, { sessionId: session.sessionId, nameId: profile.nameId, sessionIndex: assertion.sessionIndex }),
          answer: { kind: 'navigation', redirect: request.redirect },
        });
      } catch (err) {
        return refuse(services, ctx, 'user.login_failed', err);
      }
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/auth-links/saml',
    access: 'authenticated',
    level: 'server',
    body: LINK_START_BODY,
    summary:
      'Starts linking a SAML login to the signed-in account (password, or a sign-in in the last 10 minutes, required): answers where to send the browser.',
    responses: { 200: LINK_START_SCHEMA },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.authlinks:write', ownRecord(principal));
      const provider = serviceProvider(services);
      await reauthenticateToLink(services.db, services.clock, clientIp(ctx), principal, body.password);
      const request = provider.loginRequest();
      await insertSamlRequest(services.db, {
        id: request.id,
        kind: 'link',
        redirect: safeRedirect(body.redirect),
        sessionId: principal.sessionId,
        expiresAt: services.clock.now() + REQUEST_LIFETIME_MS,
      });
      ctx.body = { redirectUrl: request.url };
    },
  });

  routes.add({
    method: 'get',
    path: SAML_LINK_PATH,
    access: 'public',
    query: { type: 'object', properties: { ticket: { type: 'string', maxLength: 190 } }, required: ['ticket'] },
    summary: "Completes a SAML link: ties the identity provider's answer to the signed-in session that started it, and redirects on.",
    responses: { 302: null },
    async handler({ ctx, query, services }) {
      serviceProvider(services);
      const now = services.clock.now();
      const pending = await takeSamlRequest(services.db, query.ticket, ['linked'], now);
      if (!pending) throw new BadRequestError('this SAML link expired or was used already: start again');
      const principal = linkingPrincipal(ctx, { sessionId: pending.sessionId });
      const actor = actorOf(ctx, ctx.state.principal as Principal | undefined);
      try {
        if (!principal) throw LINKING_SESSION_GONE;
        await linkSaml(services, actor, pending.nameId!, principal.user.id);
        ctx.redirect(pending.redirect);
      } catch (err) {
        if (!(err instanceof ExternalLoginError)) throw err;
        await refuseLink(ctx, services, actor, SAML_AUTH_MODULE, pending.redirect, { message: err.message, reason: err.reason });
      }
    },
  });

  /**
   * Ends the local session at once, then asks the identity provider to end its own when the
   * session came from SAML; its answer lands on the callback.
   */
  routes.add({
    method: 'get',
    path: '/api/saml/slo',
    access: 'public',
    summary: 'Single logout: ends the local session, then redirects to the identity provider (or the login page).',
    responses: { 302: null },
    async handler({ ctx, services }) {
      const provider = serviceProvider(services);
      const principal = ctx.state.principal as Principal | undefined;
      const sessionId = principal?.via === 'session' ? principal.sessionId : null;
      const now = services.clock.now();
      const samlSession = sessionId ? await findSamlSession(services.db, sessionId) : undefined;
      if (sessionId) {
        await services.transact(async (tx) => {
          if (await revokeSession(tx.db, sessionId, now)) {
            await recordAudit(
              tx.db,
              actorOf(ctx, principal),
              { action: 'user.logout', target: { type: 'session', id: sessionId }, metadata: { method: SAML_AUTH_MODULE } },
              now,
            );
          }
        });
      }
      clearSessionCookie(ctx, services.config);
      if (!samlSession) return ctx.redirect('/login');
      const request = provider.logoutRequest({ nameId: samlSession.name_id, sessionIndex: samlSession.session_index });
      await insertSamlRequest(services.db, { id: request.id, kind: 'logout', redirect: '/login', expiresAt: now + REQUEST_LIFETIME_MS });
      ctx.redirect(request.url);
    },
  });

  routes.add({
    method: 'post',
    path: SAML_SLO_CALLBACK_PATH,
    access: 'public',
    body: { type: 'object', properties: { SAMLResponse: samlMessage, SAMLRequest: samlMessage, RelayState: { type: 'string', maxLength: 2048 } } },
    summary: "Single logout callback: takes the identity provider's LogoutResponse or LogoutRequest and redirects.",
    responses: { 302: null },
    async handler({ ctx, body, services }) {
      const provider = serviceProvider(services);
      const encoded = body.SAMLResponse ?? body.SAMLRequest;
      if (!encoded || (body.SAMLResponse && body.SAMLRequest)) throw new BadRequestError('expected one of SAMLResponse or SAMLRequest');
      const now = services.clock.now();
      try {
        const message = await readLogoutMessage(provider.settings, encoded, now);
        if (message.kind === 'response') {
          const request = await takeSamlRequest(services.db, message.inResponseTo, ['logout'], now);
          if (!request) throw new SamlRefusal('InResponseTo names no open logout request of this service');
          if (!message.success)
            throw new SamlRefusal(
              'the identity provider did not end its session',
              'single logout incomplete: you are signed out here, not at the identity provider',
            );
          return ctx.redirect(request.redirect);
        }
        await forgetExpiredSamlState(services.db, now);
        if (!(await rememberAssertionId(services.db, message.id, message.expiresAt))) throw new SamlRefusal('replayed LogoutRequest');
        const sessions = await findSessionsOfSamlSubject(services.db, message.nameId, message.sessionIndex);
        await services.transact(async (tx) => {
          for (const session of sessions) {
            if (!(await revokeSession(tx.db, session.sessionId, now))) continue;
            await recordAudit(
              tx.db,
              { ...actorOf(ctx), type: 'system' },
              {
                action: 'session.revoked',
                target: { type: 'session', id: session.sessionId },
                metadata: { reason: 'SAML single logout', userId: session.userId },
              },
              now,
            );
          }
        });
        ctx.redirect(provider.logoutResponse(message.id));
      } catch (err) {
        return refuse(services, ctx, 'saml.logout_failed', err);
      }
    },
  });
};
