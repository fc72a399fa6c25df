import type { Context, Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { BadRequestError, JSON_BODY_REQUIRED, PayloadTooLargeError } from '../errors.ts';
import { parseJsonBody } from './json-body.ts';

/** A DELETE may carry a body too: removing a second factor takes the password and a code. */
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const PARSED_METHODS = [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE];

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
 * JSON bodies only, with a size limit (413 past it). A body in another content type is a 400;
 * a request without a body leaves it undefined, so the route's schema decides if one is needed.
 * Two exceptions take a form (application/x-www-form-urlencoded): the connector proxy (kept raw,
 * above), and the paths in `formPaths`, the endpoints an identity provider's page posts to
 * (SAML's HTTP-POST binding), parsed.
 */
export function jsonBody(limitBytes: number, formPaths: ReadonlySet<string> = new Set()) {
  const rethrow = (err: Error) => {
    throw err;
  };
  // the types the check below lets through, every one parsed: koa-body's default list would leave
  // application/scim+json (SCIM clients) unparsed and the body undefined
  const jsonTypes = ['application/json', 'application/*+json'];
  // read as text (decoded, inflated, within the limit), then parsed once its shape is checked (json-body.ts)
  const readJsonText = koaBody({
    parsedMethods: PARSED_METHODS,
    json: false,
    urlencoded: false,
    text: true,
    multipart: false,
    textLimit: limitBytes,
    textTypes: jsonTypes,
    onError: rethrow,
  });
  const noNext = async () => {};
  async function parseJson(ctx: Context, next: Next): Promise<void> {
    await readJsonText(ctx, noNext);
    if (typeof ctx.request.body === 'string') ctx.request.body = parseJsonBody(ctx.request.body) as typeof ctx.request.body;
    await next();
  }
  const parseForm = koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: limitBytes, onError: rethrow });
  async function parseBody(ctx: Context, next: Next): Promise<void> {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || !!ctx.get('transfer-encoding');
    if (hasBody && ctx.path.startsWith(FORM_PATH_PREFIX) && ctx.is('application/x-www-form-urlencoded')) {
      ctx.request.body = await readRawForm(ctx, limitBytes);
      return next();
    }
    if (formPaths.has(ctx.path)) {
      if (hasBody && !ctx.is('application/x-www-form-urlencoded'))
        throw new BadRequestError('request body must be a form (Content-Type: application/x-www-form-urlencoded)');
      await parseForm(ctx, next);
      return;
    }
    if (hasBody && !ctx.is(jsonTypes)) {
      throw new BadRequestError(JSON_BODY_REQUIRED);
    }
    await parseJson(ctx, next);
  }
  // koa-body reads no body of other methods either: GET and HEAD skip the content-type checks,
  // and pass on without a frame of this middleware's own.
  return (ctx: Context, next: Next): Promise<void> => (METHODS_WITH_BODY.has(ctx.method) ? parseBody(ctx, next) : next());
}
