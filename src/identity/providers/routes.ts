/**
 * The OAuth 2.0 login endpoints of each provider: `GET /api/login/<provider>` sends the browser
 * to the provider with a fresh state, nonce and PKCE verifier kept in the state cookie;
 * `GET /api/login/<provider>/callback` checks the state against the cookie, lets the provider
 * verify the answer, signs the identity in and sends the browser on to the kept redirect. Every
 * failure is audited and lands on the login page with a message. A provider that is not
 * configured answers 404 at all of them.
 *
 * `POST /api/user/auth-links/<provider>` starts the same flow for a signed-in user who proved
 * again who they are: the callback then ties the identity to that user (the same browser session
 * must come back) instead of signing in, and sends the browser to the kept redirect, with
 * `?linkError=` when it was refused.
 */
import type { Context } from 'koa';
import * as client from 'openid-client';
import { recordFailure, type Actor } from '../../audit/writer.ts';
import { OAUTH_PROVIDERS, type OAuthProviderId } from '../../config.ts';
import { BadGatewayError, NotFoundError, ServiceError } from '../../errors.ts';
import { actorOf } from '../../http/actor.ts';
import { ownOrigin } from '../../http/csrf.ts';
import { safeRedirect } from '../../http/redirect.ts';
import { requestLogger } from '../../http/request-log.ts';
import type { RouteModule } from '../../http/route.ts';
import type { Services } from '../../services.ts';
import type { Principal } from '../../principal.ts';
import { reauthenticateToLink } from '../reauthenticate.ts';
import { completeLogin } from '../login-completion.ts';
import { ownRecord } from '../../http/subject.ts';
import { clientIp } from '../../http/client-ip.ts';
import { externalLoginUser, linkExternal } from './external-login.ts';
import { LINK_START_BODY, LINK_START_SCHEMA, LINKING_SESSION_GONE, linkingPrincipal, refuseLink } from './link-flow.ts';
import { clearStateCookie, readStateCookie, setStateCookie, STATE_TTL_MS } from './state-cookie.ts';
import { ExternalLoginError, type ExternalIdentity, type LoginProvider } from './types.ts';

const startQuery = { type: 'object', properties: { redirect: { type: 'string', maxLength: 2048 } } } as const;
/** The provider's answer: `code` and `state`, or `error`; other parameters (`iss`, `session_state`) pass. */
const callbackQuery = {
  type: 'object',
  properties: {
    code: { type: 'string', maxLength: 4096 },
    state: { type: 'string', maxLength: 512 },
    error: { type: 'string', maxLength: 512 },
  },
} as const;

function enabledProvider(services: Services, id: OAuthProviderId): LoginProvider {
  const provider = services.loginProviders.get(id);
  if (!provider) throw new NotFoundError(`login provider ${id} is not enabled`);
  return provider;
}

/** Where the provider sends the browser back: this service's own origin, as the browser addressed it. */
const callbackUrl = (ctx: Context, id: OAuthProviderId) => `${ownOrigin(ctx) ?? ctx.origin}/api/login/${id}/callback`;

function toLoginPage(ctx: Context, message: string): void {
  ctx.redirect(`/login?${new URLSearchParams({ error: message })}`);
}

/** Audits the failure and sends the browser to the login page with what it may know. */
async function failLogin(
  ctx: Context,
  services: Services,
  actor: Actor,
  provider: LoginProvider,
  refusal: { message: string; reason: string; identity?: ExternalIdentity },
) {
  const { identity } = refusal;
  await recordFailure(services, actor, {
    action: 'user.login_failed',
    target: { type: 'user', id: null, name: (identity?.email ?? identity?.subject ?? '').slice(0, 190) || null },
    metadata: { method: provider.authModule, reason: refusal.reason.slice(0, 300) },
  });
  toLoginPage(ctx, refusal.message);
}

/** An error and its causes in one line: openid-client's own messages are generic, the causes name the claim. */
function describeError(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    parts.push(current.message);
    const oauthError = (current as { error?: unknown }).error;
    if (typeof oauthError === 'string') parts.push(oauthError);
    current = current.cause;
  }
  return [...new Set(parts)].join(': ') || String(err);
}

/** A refusal's message for the user and its reason for the audit log; unexpected errors say only that the login failed. */
function refusalOf(provider: LoginProvider, err: unknown): { message: string; reason: string } {
  if (err instanceof ExternalLoginError) return { message: err.message, reason: err.reason };
  if (err instanceof ServiceError && err.status < 500) return { message: err.message, reason: err.message };
  return { message: `${provider.label} login failed: try again`, reason: describeError(err) };
}

export const oauthLoginRoutes: RouteModule = (routes) => {
  for (const id of OAUTH_PROVIDERS) {
    routes.add({
      method: 'get',
      path: `/api/login/${id}`,
      access: 'public',
      query: startQuery,
      summary: `Starts a ${id} OAuth login: redirects to the provider (or, when it cannot be reached, to the login page).`,
      responses: { 302: null },
      async handler({ ctx, query, services }) {
        const provider = enabledProvider(services, id);
        const checks = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
        let authorizationUrl: URL;
        try {
          authorizationUrl = await provider.authorizationUrl(callbackUrl(ctx, id), checks);
        } catch (err) {
          await failLogin(ctx, services, actorOf(ctx), provider, {
            message: `${provider.label} cannot be reached: try again later`,
            reason: refusalOf(provider, err).reason,
          });
          return;
        }
        setStateCookie(ctx, services.config, {
          ...checks,
          provider: id,
          redirect: safeRedirect(query.redirect),
          expiresAt: services.clock.now() + STATE_TTL_MS,
        });
        ctx.redirect(authorizationUrl.href);
      },
    });

    routes.add({
      method: 'get',
      path: `/api/login/${id}/callback`,
      access: 'public',
      query: callbackQuery,
      summary: `Where ${id} sends the browser back: signs the identity in and redirects on (to the login page with a message on failure).`,
      responses: { 302: null },
      async handler({ ctx, query, services }) {
        const provider = enabledProvider(services, id);
        const actor = actorOf(ctx);
        const state = readStateCookie(ctx, services.config, id, services.clock.now());
        // Used once, whatever happens next: a replayed callback finds no state.
        clearStateCookie(ctx, services.config, id);
        if (typeof state === 'string')
          return failLogin(ctx, services, actor, provider, { message: 'login session expired or invalid: start again', reason: state });
        if (query.state !== state.state)
          return failLogin(ctx, services, actor, provider, { message: 'login session expired or invalid: start again', reason: 'state mismatch' });

        if (state.link) {
          const principal = linkingPrincipal(ctx, state.link);
          // A refusal is the caller's doing, whoever is signed in; a link is the linking user's.
          const linkActor = actorOf(ctx, ctx.state.principal as Principal | undefined);
          try {
            if (!principal) throw LINKING_SESSION_GONE;
            await linkExternal(services, linkActor, provider, await provider.identify(new URL(ctx.href), callbackUrl(ctx, id), state), principal.user.id);
            ctx.redirect(safeRedirect(state.redirect));
          } catch (err) {
            await refuseLink(ctx, services, linkActor, provider.authModule, state.redirect, refusalOf(provider, err));
          }
          return;
        }

        let identity: ExternalIdentity | undefined;
        try {
          identity = await provider.identify(new URL(ctx.href), callbackUrl(ctx, id), state);
          await completeLogin(ctx, services, {
            method: provider.authModule,
            actor,
            user: externalLoginUser(services, actor, provider, identity),
            answer: { kind: 'navigation', redirect: state.redirect },
          });
        } catch (err) {
          await failLogin(ctx, services, actor, provider, { ...refusalOf(provider, err), identity });
        }
      },
    });

    routes.add({
      method: 'post',
      path: `/api/user/auth-links/${id}`,
      access: 'authenticated',
      level: 'server',
      body: LINK_START_BODY,
      summary: `Starts linking a ${id} login to the signed-in account (password, or a sign-in in the last 10 minutes, required): answers where to send the browser.`,
      responses: { 200: LINK_START_SCHEMA },
      async handler({ ctx, body, principal, services, authorize }) {
        await authorize('users.authlinks:write', ownRecord(principal));
        const provider = enabledProvider(services, id);
        await reauthenticateToLink(services.db, services.clock, clientIp(ctx), principal, body.password);
        const checks = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier: client.randomPKCECodeVerifier() };
        let authorizationUrl: URL;
        try {
          authorizationUrl = await provider.authorizationUrl(callbackUrl(ctx, id), checks);
        } catch (err) {
          requestLogger(ctx, services.logger).warn({ provider: id, cause: describeError(err) }, 'login provider cannot be reached');
          throw new BadGatewayError(`${provider.label} cannot be reached: try again later`);
        }
        setStateCookie(ctx, services.config, {
          ...checks,
          provider: id,
          redirect: safeRedirect(body.redirect),
          expiresAt: services.clock.now() + STATE_TTL_MS,
          link: { userId: principal.user.id, sessionId: principal.sessionId! },
        });
        ctx.body = { redirectUrl: authorizationUrl.href };
      },
    });
  }
};
