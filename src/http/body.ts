import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { BadRequestError, JSON_BODY_REQUIRED } from '../errors.ts';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * JSON bodies only, with a size limit (413 past it). A body in another content type is a 400;
 * a request without a body leaves it undefined, so the route's schema decides if one is needed.
 */
export function jsonBody(limitBytes: number) {
  const parse = koaBody({
    json: true,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonLimit: limitBytes,
    jsonStrict: true,
    onError(err) {
      throw err;
    },
  });
  return async function parseJsonBody(ctx: Context, next: Next): Promise<void> {
    const hasBody = METHODS_WITH_BODY.has(ctx.method) && (Number(ctx.get('content-length') || 0) > 0 || !!ctx.get('transfer-encoding'));
    if (hasBody && !ctx.is('application/json', 'application/*+json')) {
      throw new BadRequestError(JSON_BODY_REQUIRED);
    }
    await parse(ctx, next);
  };
}
