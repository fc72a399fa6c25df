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
 */
import Router from '@koa/router';
import type { Middleware } from 'koa';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteLayer {
  method: Method;
  path: string;
  middleware: Middleware;
}

const isStatic = (segment: string | undefined): segment is string => segment !== undefined && !/[:*({]/.test(segment);

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
    }
    this.unmatched = routesThenAllowedMethods(new Router());
  }

  /** The Koa middleware that hands each request to its router. */
  middleware(): Middleware {
    return (ctx, next) => {
      const path = ctx.path.toLowerCase();
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
