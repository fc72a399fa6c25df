/**
 * The response contract of a route: for each status it answers, the schema of its JSON body
 * (`null`: no JSON body — a redirect, an empty answer, text or HTML). Errors are not declared
 * route by route: every one is `{message}` from src/http/error-middleware.ts (ERROR_SCHEMA),
 * unless the route answers an error of its own shape (a failed connectivity test, readiness),
 * which it declares like any other status.
 *
 * With RESPONSE_VALIDATION=true (the test suite sets it) every answer a route gives is checked
 * against its declaration before it leaves: an undeclared status, or a body with a field the
 * schema does not name, a missing required field or a wrong type, is a 500 naming the route and
 * the difference, so a test that looks at the answer fails. Object schemas are closed when
 * compiled (additionalProperties: false unless they say otherwise), so a declaration lists every
 * field a client may rely on.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { ServiceError } from '../errors.ts';
import { compileOnce, type JSONSchema } from './guard.ts';

export type ResponseSchemas = Readonly<Record<number, JSONSchema | null>>;

export const ERROR_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string' } },
  required: ['message'],
  // a few errors carry a machine-readable reason beside the message (Grafana's 412 `status`, `mfaEnrolmentRequired`)
  additionalProperties: { type: ['string', 'boolean'] },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true, strictTypes: false });

/** `schema` with every object that names its properties closed to others. */
export function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (!schema || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    copy[key] =
      key === 'properties' || key === 'patternProperties' || key === '$defs'
        ? Object.fromEntries(Object.entries(value as object).map(([name, inner]) => [name, closed(inner)]))
        : closed(value);
  }
  if ('properties' in copy && !('additionalProperties' in copy) && !('patternProperties' in copy)) copy.additionalProperties = false;
  return copy;
}

function jsonOrText(body: Buffer | string): unknown {
  try {
    return JSON.parse(body.toString());
  } catch {
    return body;
  }
}

/** The check of one route's answers: throws a 500 describing how the answer breaks the declaration. */
export function compileResponseCheck(route: string, responses: ResponseSchemas): (status: number, body: unknown) => void {
  const validators = new Map<number, ValidateFunction | null>(
    Object.entries(responses).map(([status, schema]) => [Number(status), schema === null ? null : compileOnce(ajv, closed(schema) as object)]),
  );
  return (status, body) => {
    if (!validators.has(status)) {
      // an error the route does not declare is the `{message}` every route may answer
      if (status >= 400) return;
      throw new ServiceError(500, `response contract: ${route} answered ${status}, which it does not declare`);
    }
    const validate = validators.get(status);
    if (!validate) return;
    // what the client receives: dates as strings, undefined fields absent; JSON a route made itself, parsed
    const sent = body === undefined ? body : Buffer.isBuffer(body) || typeof body === 'string' ? jsonOrText(body) : JSON.parse(JSON.stringify(body));
    if (!validate(sent)) {
      const [error] = validate.errors!;
      const extra = error!.keyword === 'additionalProperties' ? ` (${(error!.params as { additionalProperty: string }).additionalProperty})` : '';
      throw new ServiceError(500, `response contract: ${route} ${status}: body${error!.instancePath} ${error!.message}${extra}`);
    }
  };
}

/** The answer of a change that has nothing to show but that it happened (a deletion, a removal). */
export const MESSAGE_SCHEMA = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } as const;

/** One page of a list (src/http/pagination.ts listPage): `{totalCount, <key>: [item], page, perPage}`. */
export function listPageSchema<K extends string, Item>(key: K, item: Item) {
  return {
    type: 'object',
    properties: {
      totalCount: { type: 'integer', minimum: 0 },
      [key]: { type: 'array', items: item },
      page: { type: 'integer', minimum: 1 },
      perPage: { type: 'integer', minimum: 1 },
    },
    required: ['totalCount', key, 'page', 'perPage'],
  } as const;
}

/** The JSON of bodies that never change: each frozen body is serialized once, for as long as it lives. */
const serializedBodies = new WeakMap<object, string>();

/**
 * A frozen body becomes its JSON text, serialized once rather than on every answer. The only
 * frozen bodies are the engine's permission maps, frozen all the way down and shared by every
 * request that asks the same (a large map took longer to serialize than the rest of its request).
 */
export function serializeFrozenBody(ctx: { body: unknown; type: string }): void {
  const body = ctx.body;
  if (body === null || typeof body !== 'object' || !Object.isFrozen(body)) return;
  let json = serializedBodies.get(body);
  if (json === undefined) {
    json = JSON.stringify(body);
    serializedBodies.set(body, json);
  }
  ctx.body = json;
  ctx.type = 'application/json; charset=utf-8';
}
