/**
 * Builds the Koa app from the domain modules. main.ts and the tests build it the same way.
 */
import Koa from 'koa';
import { roleAssignmentRoutes } from './accesscontrol/assignments.routes.ts';
import { policyDiffRoutes } from './accesscontrol/policy-diff.routes.ts';
import { policyRoutes } from './accesscontrol/policy.routes.ts';
import { roleRoutes } from './accesscontrol/roles.routes.ts';
import { accessControlRoutes } from './accesscontrol/routes.ts';
import { adminRoutes } from './admin/routes.ts';
import { auditRoutes } from './audit/routes.ts';
import { recordFailure } from './audit/writer.ts';
import { authenticate, type TokenResolver } from './http/authenticate.ts';
import type { CallerServices } from './http/caller-services.ts';
import { clientIpMiddleware } from './http/client-ip.ts';
import { cors } from './http/cors.ts';
import { csrfProtection } from './http/csrf.ts';
import { jsonBody } from './http/body.ts';
import { errorMiddleware } from './http/error-middleware.ts';
import { rateLimit } from './http/rate-limit.ts';
import { SharedRateCounter } from './ratelimit/counter.ts';
import { requestLog, unhandledErrorLogger } from './http/request-log.ts';
import { securityHeaders } from './http/security-headers.ts';
import { IpRanges } from './net/ip-ranges.ts';
import { openApiRoutes } from './openapi/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { metricsRoutes } from './metrics/routes.ts';
import { folderRoutes } from './folders/routes.ts';
import { alertRuleRoutes } from './alerting/routes.ts';
import { dashboardRoutes } from './dashboards/routes.ts';
import { permissionRoutes } from './permissions/routes.ts';
import { connectorRoutes } from './connectors/routes.ts';
import { opsPlanRoutes } from './ops/plans.routes.ts';
import { chatRoutes } from './chat/routes.ts';
import { opsRoutes } from './ops/routes.ts';
import { RouteRegistrar, type RouteEntry, type RouteModule } from './http/route.ts';
import type { RouteIndex } from './http/route-index.ts';
import { resolvePersonalAccessToken, TOKEN_PREFIX } from './identity/api-tokens.ts';
import { adminUserRoutes } from './identity/admin-users.routes.ts';
import { loginRoutes } from './identity/login.routes.ts';
import { loginMfaRoutes } from './identity/login-mfa.routes.ts';
import { currentUserMfaRoutes } from './identity/user.mfa.routes.ts';
import { currentUserPasskeyRoutes } from './identity/user.mfa-passkeys.routes.ts';
import { ldapLinkRoutes } from './identity/providers/ldap/link.routes.ts';
import { ldapAdminRoutes } from './identity/providers/ldap/routes.ts';
import { oauthLoginRoutes } from './identity/providers/routes.ts';
import { SAML_FORM_PATHS, samlRoutes } from './identity/providers/saml/routes.ts';
import { setupRoutes } from './identity/setup.routes.ts';
import { currentUserAccessTokenRoutes } from './identity/user.access-tokens.routes.ts';
import { currentUserRoutes } from './identity/user.routes.ts';
import { currentUserSessionRoutes } from './identity/user.sessions.routes.ts';
import { principalFromSession } from './identity/sessions.ts';
import { currentOrgRoutes } from './orgs/current.routes.ts';
import { orgRoutes } from './orgs/routes.ts';
import { findOrgIdsOfMember } from './orgs/store.ts';
import { quotaRoutes } from './quotas/routes.ts';
import { legacyKeyRoutes } from './serviceaccounts/legacy-keys.routes.ts';
import { serviceAccountRoutes } from './serviceaccounts/routes.ts';
import { resolveLegacyApiKey, resolveServiceAccountToken } from './serviceaccounts/tokens.ts';
import { scimRoutes } from './scim/routes.ts';
import { scimResponses } from './scim/errors.ts';
import { teamRoutes } from './teams/routes.ts';
import type { Services } from './services.ts';
import { apiDocsRoutes } from './web/api-docs.routes.ts';
import { webRoutes } from './web/routes.ts';

/** Every route module of the service, in the order a reader finds them in the spec. */
export const ROUTE_MODULES: RouteModule[] = [
  setupRoutes,
  loginRoutes,
  loginMfaRoutes,
  oauthLoginRoutes,
  samlRoutes,
  currentUserRoutes,
  currentUserSessionRoutes,
  currentUserAccessTokenRoutes,
  currentUserMfaRoutes,
  currentUserPasskeyRoutes,
  adminUserRoutes,
  ldapAdminRoutes,
  ldapLinkRoutes,
  orgRoutes,
  currentOrgRoutes,
  teamRoutes,
  folderRoutes,
  dashboardRoutes,
  alertRuleRoutes,
  permissionRoutes,
  connectorRoutes,
  opsRoutes,
  opsPlanRoutes,
  chatRoutes,
  accessControlRoutes,
  roleRoutes,
  roleAssignmentRoutes,
  policyRoutes,
  policyDiffRoutes,
  serviceAccountRoutes,
  legacyKeyRoutes,
  scimRoutes,
  quotaRoutes,
  auditRoutes,
  adminRoutes,
  healthRoutes,
  openApiRoutes,
  apiDocsRoutes,
  metricsRoutes,
  webRoutes,
];

/** API token kinds by prefix; PATs (`svc_pat_`) and SA tokens (`svc_sa_`) register here. */
export const TOKEN_RESOLVERS: Record<string, TokenResolver> = {
  [TOKEN_PREFIX.pat]: resolvePersonalAccessToken,
  [TOKEN_PREFIX.sa]: resolveServiceAccountToken,
  // migrated API_KEYS keep their old form: anything else is looked up as a legacy key, last
  '': resolveLegacyApiKey,
};

/** What the HTTP layer asks about a request's caller, answered by identity, orgs and audit. */
export function callerServices(services: Services): CallerServices {
  return {
    sessionPrincipal: (ctx, cookieValue) => principalFromSession(services, ctx, cookieValue),
    orgIdsOfMember: async (userId) => (await services.caches.memberships.get(userId, services.clock.now(), () => findOrgIdsOfMember(services.db, userId)))!,
    recordRefusal: (actor, event) => recordFailure(services, actor, event),
  };
}

export interface BuiltApp {
  app: Koa;
  routeIndex: RouteIndex;
  routes: RouteEntry[];
  /** The general rate limit's counts (null when RATE_LIMIT_PER_MINUTE=0). */
  rateCounter: SharedRateCounter | null;
  /** Stops the app's background work (the rate limit's flushes, after a last one); before the database closes. */
  stop(): Promise<void>;
}

export function buildApp(services: Services): BuiltApp {
  const app = new Koa({ proxy: false });
  app.on('error', unhandledErrorLogger(services.logger));
  const callers = callerServices(services);
  const registrar = new RouteRegistrar(services, callers);
  for (const register of ROUTE_MODULES) register(registrar);
  const routeIndex = registrar.index();

  const unauthenticatedPaths = new Set(registrar.table.filter((route) => route.skipAuthentication).map((route) => route.path));

  const trustedProxies = new IpRanges(services.config.trustedProxies, 'TRUSTED_PROXIES', 'address-or-cidr');
  app.use(requestLog(services.logger, services.metrics, trustedProxies));
  app.use(securityHeaders);
  app.use(scimResponses());
  app.use(errorMiddleware(services.logger));
  app.use(cors(services.config.corsOrigins));
  app.use(clientIpMiddleware(trustedProxies));
  app.use(jsonBody(services.config.bodyLimitBytes, SAML_FORM_PATHS));
  app.use(authenticate(services, callers, TOKEN_RESOLVERS, unauthenticatedPaths));
  // RATE_LIMIT_PER_MINUTE=0 turns it off: then it is not on the request's path at all.
  const { config } = services;
  const rateCounter =
    config.rateLimitPerMinute > 0
      ? new SharedRateCounter({
          db: services.db,
          clock: services.clock,
          logger: services.logger,
          syncMs: config.rateLimitSyncMs,
          maxKeys: config.rateLimitMaxKeys,
        })
      : null;
  if (rateCounter) {
    rateCounter.start();
    app.use(rateLimit(rateCounter, config.rateLimitPerMinute, services.clock));
  }
  app.use(csrfProtection(services.config.corsOrigins));
  app.use(routeIndex.middleware());
  return { app, routeIndex, routes: registrar.table, rateCounter, stop: async () => rateCounter?.stop() };
}
