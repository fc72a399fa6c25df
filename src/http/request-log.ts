/**
 * One log line per request, whatever its end — an error too: request id, method, path, route
 * template, status, duration and principal id; and its count and duration in the metrics. It is
 * the outermost middleware, so it sees the status the error middleware chose. The line is written
 * when the response has been sent (or the connection closed first), in pino's format but without
 * pino's per-field work (src/logging/line-writer.ts): it is on every request's path, so it builds
 * no logger and runs no serializer. The metrics are counted then too, with the time until the
 * answer was sent.
 *
 * The request id is the `X-Request-Id` a trusted proxy (TRUSTED_PROXIES) sent, or a new one; a
 * client could otherwise forge ids that mix its requests into another's trace. It is echoed in
 * the response, and every line logged for the request (a refused authorization) carries it.
 *
 * A request that failed because a backend did (a connector's 502 or 504, a proxied answer cut or
 * a backend's 5xx passed on) is not an error of the service: its one line is a warning with the
 * cause and the resource it acted on (the connector), and no stack.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { Principal } from '../principal.ts';
import type { IpRanges } from '../net/ip-ranges.ts';
import { lineWriter } from '../logging/line-writer.ts';
import { UNMATCHED_ROUTE, type Metrics } from '../metrics/metrics.ts';

/** An id a proxy may hand on: short, and nothing that could break a log line or a header. */
const FORWARDABLE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The route template (`/api/teams/:id`) the router matched, so a series is per route, not per id. */
function routeOf(ctx: Context): string {
  const matched = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
  return typeof matched === 'string' ? matched : UNMATCHED_ROUTE;
}

function principalIdOf(ctx: Context): string | null {
  return (ctx.state.principal as Principal | undefined)?.user.id ?? null;
}

/** The path of a raw request URL: a query string may carry a token, so it is never logged. */
function pathOf(url: string | undefined): string {
  if (!url) return '';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** Every field a request's line carries. */
const LINE_FIELDS = ['requestId', 'req', 'res', 'durationMs', 'route', 'principalId'] as const;

export function requestLog(logger: Logger, metrics: Metrics, trustedProxies: IpRanges) {
  const writeCompleted = lineWriter(logger, 'info', 'request completed', LINE_FIELDS);

  function requestIdOf(ctx: Context): string {
    const offered = ctx.req.headers['x-request-id'];
    if (typeof offered !== 'string' || trustedProxies.isEmpty) return randomUUID();
    const peer = ctx.req.socket.remoteAddress;
    return !!peer && trustedProxies.contains(peer) && FORWARDABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
  }

  /** The request's line and its metrics, once its response is done (`err`: it failed on the way). */
  function recordDone(ctx: Context, requestId: string, started: number, err?: Error): void {
    const { req, res } = ctx;
    const statusCode = res.statusCode;
    const elapsedMs = performance.now() - started;
    const method = req.method ?? '';
    const route = routeOf(ctx);
    metrics.httpRequest(method, route, statusCode, elapsedMs / 1000);
    // Headers carry cookies and tokens: only the method and the path are logged of the request.
    const fields = {
      requestId,
      req: { method, path: pathOf(req.url) },
      res: { statusCode },
      durationMs: Math.round(elapsedMs),
      route,
      principalId: principalIdOf(ctx),
    };
    const backendFailure = ctx.state.backendFailure as string | undefined;
    if (backendFailure !== undefined) logger.warn({ ...fields, resource: ctx.state.resource, cause: backendFailure }, 'backend failed');
    else if (err || statusCode >= 500) logger.error({ ...fields, err: err ?? new Error(`failed with status code ${statusCode}`) }, 'request errored');
    else writeCompleted(fields);
  }

  return function logRequest(ctx: Context, next: Next): Promise<void> {
    const requestId = requestIdOf(ctx);
    const started = performance.now();
    ctx.state.requestId = requestId;
    const res = ctx.res;
    res.setHeader('X-Request-Id', requestId);
    // A response always ends with 'close', once, sent or not (after 'finish' when sent), so the
    // line is written then, with the error the response failed with on the way, if any. The
    // middleware itself waits for nothing: the line and the metrics are the response's.
    // (Inline arrows: a named closure made per request costs a defineProperty of its name under tsx.)
    let failure: Error | undefined;
    res.on('error', (err: Error) => {
      failure ??= err;
    });
    res.on('close', () => recordDone(ctx, requestId, started, failure));
    return next();
  };
}

/** The logger of this request: every line carries its request id (a child logger, made when a line is first written). */
export function requestLogger(ctx: Context, fallback: Logger): Logger {
  const requestId = ctx.state.requestId as string | undefined;
  if (requestId === undefined) return fallback;
  return ((ctx.state.log as Logger | undefined) ??= fallback.child({ requestId }));
}

/** Notes that a backend failed the request, and why (the first cause noted is the one logged). */
export function noteBackendFailure(ctx: Context, cause: string): void {
  ctx.state.backendFailure ??= cause;
}

/**
 * Koa's own 'error' event, for what escaped every middleware: a failure once the response was
 * under way (a streamed body cut by its backend, a client gone) is told by the request's line;
 * anything else is an error of the service. (Koa's default prints a stack on stderr.)
 */
export function unhandledErrorLogger(logger: Logger) {
  return (err: Error & { headerSent?: boolean }, ctx?: Context): void => {
    if (err.headerSent) return;
    (ctx ? requestLogger(ctx, logger) : logger).error({ err }, 'unhandled error');
  };
}
