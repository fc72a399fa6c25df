/**
 * SCIM's error vocabulary (RFC 7644 §3.12) and its rendering: every failure under /scim/v2, the
 * service's own (401, 403, a schema guard's 400) included, leaves as
 * `{schemas: [Error URN], status: "<code>", scimType?, detail}` in application/scim+json.
 */
import type { Context, Next } from 'koa';
import { ServiceError } from '../errors.ts';

export const SCIM_PREFIX = '/scim/v2';
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';
export const ERROR_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType = 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue';

/** A refusal with SCIM's machine-readable `scimType`. */
export class ScimError extends ServiceError {
  constructor(status: number, scimType: ScimType, message: string) {
    super(status, message, {}, { scimType });
  }
}

export const invalidFilter = (message: string) => new ScimError(400, 'invalidFilter', message);
export const invalidValue = (message: string) => new ScimError(400, 'invalidValue', message);
export const invalidPath = (message: string) => new ScimError(400, 'invalidPath', message);
export const noTarget = (message: string) => new ScimError(400, 'noTarget', message);
export const uniqueness = (message: string) => new ScimError(409, 'uniqueness', message);
export const mutability = (message: string) => new ScimError(400, 'mutability', message);

export const SCIM_ERROR_SCHEMA = {
  type: 'object',
  properties: {
    schemas: { type: 'array', items: { type: 'string' } },
    status: { type: 'string' },
    scimType: { type: 'string' },
    detail: { type: 'string' },
  },
  required: ['schemas', 'status', 'detail'],
} as const;

const isScimPath = (path: string) => path === SCIM_PREFIX || path.startsWith(`${SCIM_PREFIX}/`);

/**
 * Placed outside the error middleware: what it rendered as `{message}` for a SCIM path becomes
 * SCIM's error, and every SCIM answer carries SCIM's content type.
 */
export function scimResponses() {
  return async function renderScim(ctx: Context, next: Next): Promise<void> {
    if (!isScimPath(ctx.path)) return next();
    await next();
    const status = ctx.status;
    const body = ctx.body as { message?: unknown; scimType?: unknown } | null | undefined;
    if (status >= 400) {
      const detail = body && typeof body.message === 'string' ? body.message : status === 404 ? 'not found' : 'request failed';
      // what the service refused without a SCIM reason: a bad value, or a row a concurrent request wrote first
      const fallback = status === 400 ? 'invalidValue' : status === 409 ? 'uniqueness' : undefined;
      const scimType = body && typeof body.scimType === 'string' ? body.scimType : fallback;
      ctx.body = { schemas: [ERROR_URN], status: String(status), ...(scimType && { scimType }), detail };
      ctx.status = status;
    }
    if (ctx.body !== undefined && ctx.body !== null && status !== 204) ctx.type = SCIM_CONTENT_TYPE;
  };
}
