/**
 * One ajv guard per route part. Schemas are `as const` objects; the TypeScript types of the
 * validated values derive from them (json-schema-to-ts), so a contract is written once.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { BadRequestError } from '../errors.ts';

export type { JSONSchema };
export type Infer<S> = S extends JSONSchema ? FromSchema<S> : undefined;

const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: true, removeAdditional: false, strict: true });
/** Query strings and path params arrive as strings; their schemas coerce them. */
const coercingAjv = new Ajv({ allErrors: false, coerceTypes: true, useDefaults: true, strict: true });

function describe(part: string, error: ErrorObject): string {
  const where = error.instancePath ? `${part}${error.instancePath.replace(/\//g, '.')}` : part;
  if (error.keyword === 'required') return `${where}.${(error.params as { missingProperty: string }).missingProperty} is required`;
  if (error.keyword === 'additionalProperties') {
    return `${where}.${(error.params as { additionalProperty: string }).additionalProperty} is not allowed`;
  }
  return `${where} ${error.message ?? 'is invalid'}`;
}

export interface Guard {
  (value: unknown): unknown;
}

/** `part` names where the value sits in messages: a route part, or a field of the body checked on its own (`body.args`). */
export function compileGuard(part: 'body' | 'query' | 'params' | `body.${string}`, schema: JSONSchema): Guard {
  const validate: ValidateFunction = (part === 'query' || part === 'params' ? coercingAjv : ajv).compile(schema as object);
  // a body whose every field is optional may be left out (`POST …/reject` without a reason)
  const fallback = part === 'body' && !(schema as { required?: unknown[] }).required?.length ? {} : undefined;
  return (value) => {
    const candidate = value ?? fallback;
    if (candidate === undefined) {
      throw new BadRequestError('request body is required');
    }
    if (!validate(candidate)) throw new BadRequestError(describe(part, validate.errors![0]!));
    return candidate;
  };
}
