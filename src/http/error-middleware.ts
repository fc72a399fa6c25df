import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { translateDbError } from '../db/errors.ts';
import { ServiceError, JSON_BODY_REQUIRED, PayloadTooLargeError } from '../errors.ts';
import { noteBackendFailure, requestLogger } from './request-log.ts';

/** koa-body / raw-body report their failures with these statuses and types. */
function fromBodyParser(err: { status?: number; type?: string }): ServiceError | null {
  if (err.status === 413 || err.type === 'entity.too.large') return new PayloadTooLargeError();
  if (err.status === 400 || err.type === 'entity.parse.failed') return new ServiceError(400, 'request body is not valid JSON');
  if (err.status === 415) return new ServiceError(400, JSON_BODY_REQUIRED);
  return null;
}

/** What the router answers on its own (no route, a method the path lacks) comes without a body: the message it gets. */
function routerRefusal(ctx: Context): string | null {
  if (ctx.body !== undefined && ctx.body !== null) return null;
  if (ctx.status === 404 && ctx.path.startsWith('/api/')) return 'not found';
  if (ctx.status === 405) return `method ${ctx.method} is not allowed on ${ctx.path} (allowed: ${ctx.response.get('Allow')})`;
  if (ctx.status === 501) return `method ${ctx.method} is not supported`;
  return null;
}

/** Every failure becomes `{message}` with its status; anything unexpected is a redacted 500. */
export function errorMiddleware(logger: Logger) {
  return async function renderErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      const message = routerRefusal(ctx);
      if (message) {
        // Set again: Koa turns a status nobody set (the 404 of no route) into 200 when a body is given.
        const status = ctx.status;
        ctx.body = { message };
        ctx.status = status;
      }
    } catch (err) {
      const known = err instanceof ServiceError ? err : (translateDbError(err) ?? fromBodyParser(err as object));
      if (known) {
        // a backend's failure, not the service's: the request's line tells it (request-log.ts)
        if (known.status === 502 || known.status === 504) noteBackendFailure(ctx, known.message);
        ctx.status = known.status;
        ctx.set(known.headers);
        ctx.body = { ...known.fields, message: known.message };
        return;
      }
      requestLogger(ctx, logger).error({ err, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { message: 'internal server error' };
    }
  };
}
