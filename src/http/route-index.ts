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
 * A request is handed to its route directly, without the router, when its path has no empty
 * segment (no trailing slash, no `//`): the router tests every pattern it holds and builds a
 * middleware chain on every request, which cost a route more than its own work. A static route
 * as declared (`GET /api/user`, in any case) is found by one map lookup, when the router would
 * choose it for its own path (no route declared before it matches that path too). Otherwise the
 * routes of the request's router are compared segment by segment in declaration order, as the
 * router would: static segments in any case, a `:name` segment taking any segment, its value
 * percent-decoded unless that fails (the router's own rules). A request a wildcard route
 * (`*path`) may match, and every other spelling, go to the router.
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

/** A route template as the direct dispatch compares it: static segments in lower case, a parameter by its name. */
type Segment = { static: string } | { parameter: string };

interface Template {
  layer: RouteLayer;
  /** The methods the router runs it for: a GET's HEAD too. */
  methods: readonly string[];
  segments: Segment[];
  /** A wildcard route (`/proxy/:uid/*path`): `segments` are those before the wildcard, which takes the rest. */
  wildcard: boolean;
}

function compile(layer: RouteLayer): Template {
  const methods = layer.method === 'get' ? ['GET', 'HEAD'] : [layer.method.toUpperCase()];
  const all = segmentsOf(layer.path);
  const wildcardAt = all.findIndex((segment) => segment.startsWith('*'));
  const segments = (wildcardAt < 0 ? all : all.slice(0, wildcardAt)).map((segment): Segment =>
    segment.startsWith(':') ? { parameter: segment.slice(1) } : { static: segment.toLowerCase() },
  );
  if (segments.some((segment) => 'static' in segment && PATTERN_SYNTAX.test(segment.static)))
    throw new Error(`${layer.path}: a pattern the direct dispatch does not read`);
  return { layer, methods, segments, wildcard: wildcardAt >= 0 };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The parameters of `segments` for a path split in segments (its first ones only, with `prefix`), or null when it does not match. */
function matchSegments(segments: readonly Segment[], requested: readonly string[], prefix = false): Record<string, string> | null {
  if (prefix ? requested.length <= segments.length : segments.length !== requested.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if ('static' in segment) {
      if (segment.static !== requested[i]!.toLowerCase()) return null;
    } else {
      params[segment.parameter] = safeDecode(requested[i]!);
    }
  }
  return params;
}

/** What a request resolves to without the router: its route, and the route's parameters. */
export interface DirectMatch {
  layer: RouteLayer;
  params: Record<string, string>;
}

export class RouteIndex {
  /** The routers of the index; a route under a parameter is in several (a test checks every declared route is in one). */
  readonly routers: Router[] = [];
  private readonly chains = new Map<string, Middleware>();
  private readonly unmatched: Middleware;
  /** The static routes a request reaches without its router, by `METHOD /lower/case/path`. */
  readonly direct = new Map<string, RouteLayer>();
  /** Each router's routes in its order, compared segment by segment. */
  private readonly templates = new Map<string, Template[]>();

  constructor(layers: readonly RouteLayer[]) {
    const keyed = layers.map((layer) => ({ layer, ...templateKey(layer.path) }));
    const keys = new Set(keyed.map((entry) => entry.key));
    for (const key of keys) {
      // a two-segment key also holds the routes under a parameter of its first segment, in declaration order
      const firstSegment = `/${segmentsOf(key)[0]}`;
      const held = keyed.filter(({ key: own, underParameter }) => own === key || (underParameter && own === firstSegment));
      const router = new Router();
      for (const { layer } of held) router[layer.method](layer.path, layer.middleware);
      this.routers.push(router);
      this.chains.set(key, routesThenAllowedMethods(router));
      this.templates.set(
        key,
        held.map(({ layer }) => compile(layer)),
      );
      for (const { layer, key: own } of held) {
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

  /** The key of the router that holds the routes `path` (in lower case) may match: its first two segments, else its first. */
  private routerKey(path: string): string | null {
    // the first two segments, `/api/teams` of `/api/teams/search`, without splitting the whole path
    const firstEnd = path.indexOf('/', 1);
    const first = firstEnd < 0 ? path : path.slice(0, firstEnd);
    const secondEnd = firstEnd < 0 ? -1 : path.indexOf('/', firstEnd + 1);
    const firstTwo = firstEnd < 0 ? null : secondEnd < 0 ? path : path.slice(0, secondEnd);
    if (firstTwo !== null && this.chains.has(firstTwo)) return firstTwo;
    return this.chains.has(first) ? first : null;
  }

  /** The route a request reaches without the router, or null when the router decides (see the file's comment). */
  resolve(method: string, path: string): DirectMatch | null {
    const lower = path.toLowerCase();
    return this.resolveUnder(this.routerKey(lower), method, path, lower);
  }

  /** resolve() once the router key of `path` (`lower` in lower case) is known. */
  private resolveUnder(key: string | null, method: string, path: string, lower: string): DirectMatch | null {
    const direct = this.direct.get(`${method} ${lower}`);
    if (direct) return { layer: direct, params: {} };
    if (key === null) return null;
    const requested = segmentsOf(path);
    if (requested.includes('')) return null;
    for (const template of this.templates.get(key)!) {
      if (!template.methods.includes(method)) continue;
      const params = matchSegments(template.segments, requested, template.wildcard);
      // a wildcard route that may match is the router's to decide
      if (params) return template.wildcard ? null : { layer: template.layer, params };
    }
    return null;
  }

  /** The Koa middleware that hands each request to its route, or to its router. */
  middleware(): Middleware {
    return (ctx, next) => {
      const lower = ctx.path.toLowerCase();
      const key = this.routerKey(lower);
      const match = this.resolveUnder(key, ctx.method, ctx.path, lower);
      if (match) {
        // what the router sets for a route it runs, and the request log reads
        (ctx as typeof ctx & { _matchedRoute: string })._matchedRoute = match.layer.path;
        ctx.params = match.params;
        return match.layer.middleware(ctx, next);
      }
      return (key !== null ? this.chains.get(key)! : this.unmatched)(ctx, next);
    };
  }
}
