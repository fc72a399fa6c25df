import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';
import { BadRequestError, JSON_BODY_REQUIRED } from '../errors.ts';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/**
 * JSON bodies only, with a size limit (413 past it). A body in another content type is a 400;
 * a request without a body leaves it undefined, so the route's schema decides if one is needed.
 * The paths in `formPaths` take an HTML form (application/x-www-form-urlencoded) instead: the
 * endpoints an identity provider's page posts to (SAML's HTTP-POST binding).
 */
export function jsonBody(limitBytes: number, formPaths: ReadonlySet<string> = new Set()) {
  const rethrow = (err: Error) => {
    throw err;
  };
  const parseJson = koaBody({ json: true, urlencoded: false, text: false, multipart: false, jsonLimit: limitBytes, jsonStrict: true, onError: rethrow });
  const parseForm = koaBody({ json: false, urlencoded: true, text: false, multipart: false, formLimit: limitBytes, onError: rethrow });
  return async function parseBody(ctx: Context, next: Next): Promise<void> {
    const hasBody = METHODS_WITH_BODY.has(ctx.method) && (Number(ctx.get('content-length') || 0) > 0 || !!ctx.get('transfer-encoding'));
    if (formPaths.has(ctx.path)) {
      if (hasBody && !ctx.is('application/x-www-form-urlencoded'))
        throw new BadRequestError('request body must be a form (Content-Type: application/x-www-form-urlencoded)');
      await parseForm(ctx, next);
      return;
    }
    if (hasBody && !ctx.is('application/json', 'application/*+json')) {
      throw new BadRequestError(JSON_BODY_REQUIRED);
    }
    await parseJson(ctx, next);
  };
}
