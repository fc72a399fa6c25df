import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { BadRequestError, JSON_BODY_REQUIRED, PayloadTooLargeError } from '../errors.ts';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The connector proxy takes what Prometheus clients send, a form (`query=…&match[]=…`); it is
 * kept as the raw text, so repeated and bracketed names reach the backend as they came.
 */
const FORM_PATH_PREFIX = '/api/connectors/proxy/';

async function readRawForm(ctx: Context, limitBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw new PayloadTooLargeError();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * JSON bodies only (and forms for the connector proxy), with a size limit (413 past it). A body in another content type is a 400;
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
    if (hasBody && ctx.path.startsWith(FORM_PATH_PREFIX) && ctx.is('application/x-www-form-urlencoded')) {
      ctx.request.body = await readRawForm(ctx, limitBytes);
      return next();
    }
    if (hasBody && !ctx.is('application/json', 'application/*+json')) {
      throw new BadRequestError(JSON_BODY_REQUIRED);
    }
    await parse(ctx, next);
  };
}
