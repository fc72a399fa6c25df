/**
 * How a route is declared. Each route states its access (`public`, or `authenticated` and then
 * it must call `authorize`), its schemas, and a handler that reads like a sentence:
 * guard -> load -> authorize -> act -> present. Every declaration lands in one table, which a
 * test walks against the router.
 */
import type { Context } from 'koa';
import type { AuditEvent } from '../audit/writer.ts';
import { actorOf } from './actor.ts';
import type { AuthzInput, Decision, ListedKind, PermissionMap, Requirement, ResourceRef, Subject, VisibleSet } from '../authz/types.ts';
import type { Principal } from '../principal.ts';
import type { Services } from '../services.ts';
import type { Action } from '../authz/actions.ts';
import { ForbiddenError, MfaEnrolmentRequiredError, UnauthorizedError } from '../errors.ts';
import type { CallerServices } from './caller-services.ts';
import { compileGuard, type Guard, type Infer, type JSONSchema } from './guard.ts';
import { compileResponseCheck, serializeFrozenBody, type ResponseSchemas } from './responses.ts';
import { resolveActiveOrg } from './org-context.ts';
import { noStoreForTokens } from './security-headers.ts';
import { requestLogger } from './request-log.ts';
import { RouteIndex, type RouteLayer } from './route-index.ts';
import { subjectOf } from './subject.ts';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteContext<B, Q, P> {
  ctx: Context;
  body: B;
  query: Q;
  params: P;
  services: Services;
  /** The authenticated caller; always set on `authenticated` routes. */
  principal: Principal;
  /** The active org (header, then ?orgId, then the user's default); only on `org` routes. */
  orgId: string;
  /**
   * Asks the policy; throws 403 unless allowed. The org is the route's (the active org on `org`
   * routes, none on `server` routes) unless `options.orgId` names one.
   */
  authorize(action: Action, resource?: ResourceRef, options?: AuthorizeOptions): Promise<void>;
  /**
   * The items the caller may do `action` on in the route's org, in their order: one policy call
   * for a whole list. `requiresOf` names what an item needs besides (AuthorizeOptions.requires).
   */
  filter<T>(action: Action, items: readonly T[], resourceOf: (item: T) => ResourceRef, requiresOf?: (item: T) => Requirement[]): Promise<T[]>;
  /**
   * The items of `kind` the caller may do `action` on in the route's org, as sets a query
   * filters by (db/search.ts whereVisible): one policy call for a whole list, whatever its
   * length, so only a page of it is read. Exactly what filter() keeps of the same items.
   */
  visible(action: Action, kind: ListedKind): Promise<Readonly<VisibleSet>>;
  /** What `subject` (the caller unless named) holds in the route's org, `{action: [scope]}`. */
  permissions(subject?: Subject): Promise<PermissionMap>;
  /**
   * What the policy decides for `subject` (the caller unless named) doing `action` in the route's
   * org, enforcing nothing: the route's own authorize() is still the caller's right to ask.
   */
  explain(action: string, resource?: ResourceRef, subject?: Subject): Promise<Decision>;
}

/**
 * The audit action of every change the policy refused, whatever the route: the refused permission
 * (`teams:create`) is its `metadata.permission`, the route its `metadata.request`.
 */
export const ACCESS_DENIED = 'access.denied';

/** The refusal of an action: what the caller learns of a deny, whatever the policy's reasons. */
export function permissionDenied(action: string): ForbiddenError {
  return new ForbiddenError(`permission denied: you need ${action} to do this`);
}

/**
 * The audit target of a refused action: the resource as the policy names it (`{scope}` split
 * into kind and id), or without one the org the action was refused in.
 */
function refusalTarget(resource: ResourceRef | undefined, orgId: string | null): AuditEvent['target'] {
  if (!resource) return orgId ? { type: 'org', id: orgId } : undefined;
  if ('scope' in resource) {
    const [kind = resource.scope, , id] = resource.scope.split(':');
    return { type: kind, id: id ?? null };
  }
  return { type: resource.kind, id: 'uid' in resource ? resource.uid : resource.id };
}

/** The query string's parameters but ?orgId, which selects the active org (org-context.ts) on any route. */
function ownQuery(ctx: Context): Record<string, unknown> {
  const { orgId: _activeOrg, ...own } = ctx.query;
  return own;
}

export interface AuthorizeOptions {
  orgId?: string | null;
  chat?: AuthzInput['chat'];
  /** The permissions of a role being created, changed or assigned: the caller must hold each. */
  delegate?: AuthzInput['delegate'];
  /** The user an org membership change is about. */
  targetUser?: AuthzInput['target_user'];
  /** A move: the folder the resource lands in; the same decision asks `<resource>:create` there. */
  destination?: AuthzInput['destination'];
  /** A setup-wizard change: whether setup is still open to anyone. */
  setup?: AuthzInput['setup'];
  /** What the action needs besides, each allowed in the same decision (an alert rule: query on its connectors). */
  requires?: AuthzInput['requires'];
  /** Who authored the target: approving an ops plan needs someone else, cancelling it its author. */
  author?: AuthzInput['author'];
}

export interface RouteSpec<B, Q, P> {
  method: Method;
  path: string;
  access: 'public' | 'authenticated';
  /** `org`: the handler acts in the active org; `server`: server-level (org_id null in the policy). */
  level?: 'org' | 'server';
  /**
   * A public route that never reads the session cookie or an API token (health probes, which
   * must not need the database; /metrics, which checks METRICS_TOKEN itself). Static paths only.
   */
  skipAuthentication?: boolean;
  /**
   * A session that must enrol a second factor (MFA_REQUIRED_FOR) may call it: enrolment itself,
   * reading its own profile, logging in and out. Every other API route refuses such a session.
   */
  beforeMfaEnrolment?: boolean;
  body?: B;
  query?: Q;
  params?: P;
  /** What it answers, by status (src/http/responses.ts); errors are `{message}` everywhere. */
  responses?: ResponseSchemas;
  /** One line for the API document: what the route does. */
  summary?: string;
  handler(route: RouteContext<Infer<B>, Infer<Q>, Infer<P>>): Promise<void>;
}

export interface RouteEntry {
  method: Method;
  path: string;
  access: 'public' | 'authenticated';
  skipAuthentication: boolean;
  schemas: { body?: JSONSchema; query?: JSONSchema; params?: JSONSchema };
  responses?: ResponseSchemas;
  summary?: string;
}

/** What a route module exports: a function that registers its routes. */
export type RouteModule = (routes: RouteRegistrar) => void;

export class RouteRegistrar {
  readonly table: RouteEntry[] = [];
  private readonly layers: RouteLayer[] = [];

  constructor(
    private readonly services: Services,
    private readonly callers: CallerServices,
  ) {}

  /** The routes declared so far, indexed for dispatch (app.ts builds it once every module has registered). */
  index(): RouteIndex {
    return new RouteIndex(this.layers);
  }

  add<
    const B extends JSONSchema | undefined = undefined,
    const Q extends JSONSchema | undefined = undefined,
    const P extends JSONSchema | undefined = undefined,
  >(spec: RouteSpec<B, Q, P>): void {
    const guards = {
      body: spec.body ? compileGuard('body', spec.body) : null,
      query: spec.query ? compileGuard('query', spec.query) : null,
      params: spec.params ? compileGuard('params', spec.params) : null,
    } satisfies Record<string, Guard | null>;
    const { services, callers } = this;
    const skipAuthentication = spec.skipAuthentication === true;
    if (skipAuthentication && (spec.access !== 'public' || spec.path.includes(':'))) {
      throw new Error(`${spec.path}: only a public route with a static path may skip authentication`);
    }
    this.table.push({
      method: spec.method,
      path: spec.path,
      access: spec.access,
      skipAuthentication,
      schemas: { body: spec.body, query: spec.query, params: spec.params },
      responses: spec.responses,
      summary: spec.summary,
    });
    const checkResponse =
      spec.responses && services.config.validateResponses ? compileResponseCheck(`${spec.method.toUpperCase()} ${spec.path}`, spec.responses) : null;

    const handle = async (ctx: Context): Promise<void> => {
      const principal = ctx.state.principal as Principal | undefined;
      if (spec.access === 'authenticated' && !principal) {
        throw new UnauthorizedError(ctx.state.sessionExpired ? 'session expired or revoked' : undefined);
      }
      if (principal?.mfaEnrolmentPending && !spec.beforeMfaEnrolment && spec.path.startsWith('/api/')) throw new MfaEnrolmentRequiredError();
      const params = guards.params ? guards.params({ ...ctx.params }) : undefined;
      const query = guards.query ? guards.query(ownQuery(ctx)) : undefined;
      const body = guards.body ? guards.body(ctx.request.body) : undefined;
      const orgId = spec.level === 'org' && principal ? await resolveActiveOrg(ctx, services, callers, principal) : '';
      let refusal: AuditEvent | null = null;
      const route: RouteContext<unknown, unknown, unknown> = {
        ctx,
        body,
        query,
        params,
        services,
        principal: principal as Principal,
        orgId,
        async filter(action, items, resourceOf, requiresOf) {
          const org_id = spec.level === 'org' ? orgId : null;
          const resources = items.map((item) => (requiresOf ? { ...resourceOf(item), requires: requiresOf(item) } : resourceOf(item)));
          const allowed = await services.engine.filter({ subject: subjectOf(principal), org_id, action, resources });
          return allowed.sort((a, b) => a - b).map((index) => items[index]!);
        },
        visible(action, kind) {
          return services.engine.visible({ subject: subjectOf(principal), org_id: spec.level === 'org' ? orgId : null, action, kind });
        },
        permissions(subject) {
          return services.engine.permissions(subject ?? subjectOf(principal), spec.level === 'org' ? orgId : null);
        },
        explain(action, resource, subject) {
          const input: AuthzInput = { subject: subject ?? subjectOf(principal), org_id: spec.level === 'org' ? orgId : null, action };
          if (resource) input.resource = resource;
          return services.engine.explain(input);
        },
        async authorize(action, resource, options = {}) {
          const routeOrg = spec.level === 'org' ? orgId : null;
          const input: AuthzInput = { subject: subjectOf(principal), org_id: options.orgId === undefined ? routeOrg : options.orgId, action };
          if (resource) input.resource = resource;
          if (options.chat) input.chat = options.chat;
          if (options.delegate) input.delegate = options.delegate;
          if (options.targetUser) input.target_user = options.targetUser;
          if (options.destination) input.destination = options.destination;
          if (options.setup) input.setup = options.setup;
          if (options.requires) input.requires = options.requires;
          if (options.author) input.author = options.author;
          const decision = await services.engine.authorize(input);
          if (!decision.allow) {
            // The reasons can name scopes the caller may not see (a dashboard's folder), so
            // they go to the log, and the caller learns which action was refused, or what the
            // policy chose to tell (its message is safe to show).
            requestLogger(ctx, services.logger).info({ action, resource, reasons: decision.reasons }, 'authorization denied');
            refusal = {
              action: ACCESS_DENIED,
              orgId: input.org_id,
              target: refusalTarget(resource, input.org_id),
              metadata: {
                permission: action,
                request: `${spec.method.toUpperCase()} ${spec.path}`,
                ...(options.destination && { destination: refusalTarget(options.destination, input.org_id) }),
                ...(options.chat && {
                  chat: { tool: options.chat.tool, agentType: options.chat.agent_type, permissionMode: options.chat.permission_mode },
                }),
              },
            };
            // A caller who has not signed in might be allowed once it does (a public route that
            // asks the policy: the setup wizard), so its refusal is a 401.
            if (!principal) throw new UnauthorizedError(decision.message);
            throw decision.message ? new ForbiddenError(decision.message) : permissionDenied(action);
          }
          // what the request acts on, for its log line should a backend fail it (a connector's)
          if (resource) ctx.state.resource = resource;
        },
      };
      try {
        // The guards above validated body, query and params against the schemas these types derive from.
        await (spec.handler as (route: RouteContext<unknown, unknown, unknown>) => Promise<void>)(route);
        checkResponse?.(ctx.status, ctx.body);
        noStoreForTokens(ctx);
        serializeFrozenBody(ctx);
      } catch (err) {
        // A refused attempt to change something is audited. The handler has returned, so any
        // transaction it opened has rolled back and the entry gets one of its own.
        if (refusal && spec.method !== 'get' && err instanceof ForbiddenError) await callers.recordRefusal(actorOf(ctx, principal), refusal);
        throw err;
      }
    };
    this.layers.push({ method: spec.method, path: spec.path, middleware: handle });
  }
}
