/**
 * The routes, dispatched by their leading static path segments. One @koa/router holding every
 * route tests each route's pattern in turn on every request (about 160 of them); here each
 * request reaches a router holding only the routes that can match it: those whose first two
 * segments are its own (`/api/teams` for `/api/teams/search`), plus those whose second segment
 * is a parameter under its first (`/assets/:file`). Within a router the routes keep the order
 * they were declared in, so a static route declared before a parameter route still wins
 * (`/api/teams/search` before `/api/teams/:id`).
 *
 * Matching stays the router's own (case-insensitive, a trailing slash allowed), so the keys are
 * compared in lower case; a request no router can match gets an empty one, whose
 * allowedMethods still answers an unknown method with 501 as before.
 *
 * A request for a static route exactly as declared (`GET /api/user`, in any case) is handed to
 * it directly, without the router: the router tests every pattern it holds and builds a
 * middleware chain on every request, which cost a static route more than its own work. A static
 * route is taken directly only when the router would choose it for its own path (no route
 * declared before it matches that path too); other spellings (`/api/user/`) go to the router.
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteLayer {
  method: Method;
  path: string;
  middleware: Middleware;
}

const PATTERN_SYNTAX = /[:*({]/;
const isStatic = (segment: string | undefined): segment is string => segment !== undefined && !PATTERN_SYNTAX.test(segment);

/** The segments of a path or template after its leading slash: `/api/teams/:id` → api, teams, :id. */
function segmentsOf(path: string): string[] {
  return path.split('/').slice(1);
}

/** The key of a route template: its first two segments when static, else its first (a route under a parameter). */
function templateKey(path: string): { key: string; underParameter: boolean } {
  const [first, second] = segmentsOf(path);
  if (!isStatic(first)) throw new Error(`${path}: a route's first path segment must be static`);
  if (isStatic(second)) return { key: `/${first}/${second}`.toLowerCase(), underParameter: false };
  return { key: `/${first}`.toLowerCase(), underParameter: true };
}

/** What `app.use(router.routes()); app.use(router.allowedMethods())` would run, as one middleware. */
function routesThenAllowedMethods(router: Router): Middleware {
  const routes = router.routes() as Middleware;
  const allowedMethods = router.allowedMethods({ throw: false }) as Middleware;
  return (ctx, next) => routes(ctx, () => allowedMethods(ctx, next));
}

export class RouteIndex {
  /** The routers of the index; a route under a parameter is in several (a test checks every declared route is in one). */
  readonly routers: Router[] = [];
  private readonly chains = new Map<string, Middleware>();
  private readonly unmatched: Middleware;
  /** The static routes a request reaches without its router, by `METHOD /lower/case/path`. */
  readonly direct = new Map<string, RouteLayer>();

  constructor(layers: readonly RouteLayer[]) {
    const keyed = layers.map((layer) => ({ layer, ...templateKey(layer.path) }));
    const keys = new Set(keyed.map((entry) => entry.key));
    for (const key of keys) {
      const router = new Router();
      // a two-segment key also holds the routes under a parameter of its first segment, in declaration order
      const firstSegment = `/${segmentsOf(key)[0]}`;
      for (const { layer, key: own, underParameter } of keyed) {
        if (own === key || (underParameter && own === firstSegment)) router[layer.method](layer.path, layer.middleware);
      }
      this.routers.push(router);
      this.chains.set(key, routesThenAllowedMethods(router));
      for (const { layer, key: own } of keyed) {
        if (own === key && !PATTERN_SYNTAX.test(layer.path)) this.addDirect(router, layer);
      }
    }
    this.unmatched = routesThenAllowedMethods(new Router());
  }

  /** `layer` is reached directly, by every method the router would run it for, when the router picks it first for its own path. */
  private addDirect(router: Router, layer: RouteLayer): void {
    const method = layer.method.toUpperCase();
    const [first] = router.match(layer.path, method).pathAndMethod;
    if (first?.path !== layer.path) return;
    for (const routed of first.methods) this.direct.set(`${routed} ${layer.path.toLowerCase()}`, layer);
  }

  /** The Koa middleware that hands each request to its router. */
  middleware(): Middleware {
    return (ctx, next) => {
      const path = ctx.path.toLowerCase();
      const direct = this.direct.get(`${ctx.method} ${path}`);
      if (direct) {
        // what the router sets for a route it runs, and the request log reads
        (ctx as typeof ctx & { _matchedRoute: string })._matchedRoute = direct.path;
        ctx.params = {};
        return direct.middleware(ctx, next);
      }
      // the first two segments, `/api/teams` of `/api/teams/search`, without splitting the whole path
      const firstEnd = path.indexOf('/', 1);
      const first = firstEnd < 0 ? path : path.slice(0, firstEnd);
      const secondEnd = firstEnd < 0 ? -1 : path.indexOf('/', firstEnd + 1);
      const firstTwo = firstEnd < 0 ? null : secondEnd < 0 ? path : path.slice(0, secondEnd);
      const chain = (firstTwo !== null && this.chains.get(firstTwo)) || this.chains.get(first) || this.unmatched;
      return chain(ctx, next);
    };
  }
}
