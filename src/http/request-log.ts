/**
 * One log line per request (pino-http), whatever its end — an error too: request id, method,
 * path, route template, status, duration and principal id; and its count and duration in the
 * metrics. It is the outermost middleware, so it sees the status the error middleware chose.
 *
 * The request id is the `X-Request-Id` a trusted proxy (TRUSTED_PROXIES) sent, or a new one; a
 * client could otherwise forge ids that mix its requests into another's trace. It is echoed in
 * the response, and every line logged for the request (a refused authorization) carries it.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Principal } from '../identity/principal.ts';
import type { IpRanges } from '../net/ip-ranges.ts';
import { UNMATCHED_ROUTE, type Metrics } from '../metrics/metrics.ts';

/** An id a proxy may hand on: short, and nothing that could break a log line or a header. */
const FORWARDABLE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The Koa context of a raw request, for the facts pino-http asks for when the response ends. */
const contexts = new WeakMap<IncomingMessage, Context>();

/** The route template (`/api/teams/:id`) the router matched, so a series is per route, not per id. */
function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  return typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
}

function principalIdOf(ctx: Context | undefined): string | null {
  return (ctx?.state.principal as Principal | undefined)?.user.id ?? null;
}

function requestFacts(req: IncomingMessage): { route: string; principalId: string | null } {
  const ctx = contexts.get(req);
  return { route: ctx ? routeOf(ctx) : UNMATCHED_ROUTE, principalId: principalIdOf(ctx) };
}

export function requestLog(logger: Logger, metrics: Metrics, trustedProxies: IpRanges) {
  const log = pinoHttp({
    logger,
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
    genReqId(req) {
      const peer = req.socket.remoteAddress;
      const offered = req.headers['x-request-id'];
      const fromProxy = !!peer && trustedProxies.contains(peer);
      return fromProxy && typeof offered === 'string' && FORWARDABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
    },
    // Headers carry cookies and tokens, and a query string may carry a token: neither is logged.
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, path: req.url.split('?')[0] }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, _res, value) => ({ ...value, ...requestFacts(req) }),
    customErrorObject: (req, _res, _err, value) => ({ ...value, ...requestFacts(req) }),
  });

  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    log(ctx.req, ctx.res);
    contexts.set(ctx.req, ctx);
    ctx.state.log = ctx.req.log;
    ctx.set('X-Request-Id', String(ctx.req.id));
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.httpRequest(ctx.method, routeOf(ctx), ctx.status, (performance.now() - started) / 1000);
    }
  };
}

/** The logger of this request: every line carries its request id. */
export function requestLogger(ctx: Context, fallback: Logger): Logger {
  return (ctx.state.log as Logger | undefined) ?? fallback;
}
