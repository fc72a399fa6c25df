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

const compiled = new WeakMap<Ajv, Map<string, ValidateFunction>>();

/**
 * `schema` compiled by `ajv`, once per process for each distinct schema: every app built in a
 * process (a test suite builds hundreds) shares the validators, where compiling them all again
 * costs about a second. A validator is a pure function of its schema and the instance's options.
 */
export function compileOnce(instance: Ajv, schema: object): ValidateFunction {
  let byText = compiled.get(instance);
  if (!byText) compiled.set(instance, (byText = new Map()));
  const text = JSON.stringify(schema);
  let validate = byText.get(text);
  if (!validate) byText.set(text, (validate = instance.compile(schema)));
  return validate;
}

function describe(part: string, error: ErrorObject): string {
  const where = error.instancePath ? `${part}${error.instancePath.replace(/\//g, '.')}` : part;
  if (error.keyword === 'required') return `${where}.${(error.params as { missingProperty: string }).missingProperty} is required`;
  if (error.keyword === 'additionalProperties') {
    return `${where}.${(error.params as { additionalProperty: string }).additionalProperty} is not allowed`;
  }
  return `${where} ${error.message ?? 'is invalid'}`;
}

/**
 * The widest bounds a numeric field may declare: every integer within them is exact in
 * JavaScript and fits a BIGINT column. A field stored in a narrower column declares less.
 */
export const WIDEST_NUMBER_BOUND = Number.MAX_SAFE_INTEGER;

const isBound = (value: unknown): boolean => typeof value === 'number' && Math.abs(value) <= WIDEST_NUMBER_BOUND;

/** The sub-schemas of `schema`, each with where it sits (`.name`, `[]`). */
function subSchemas(schema: Record<string, unknown>): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions']) {
    for (const [name, sub] of Object.entries((schema[key] as Record<string, unknown> | undefined) ?? {})) found.push([`.${name}`, sub]);
  }
  for (const key of ['additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else', 'contains']) {
    if (schema[key] !== undefined) found.push([`<${key}>`, schema[key]]);
  }
  const items = schema.items;
  for (const sub of Array.isArray(items) ? items : items === undefined ? [] : [items]) found.push(['[]', sub]);
  for (const key of ['prefixItems', 'anyOf', 'oneOf', 'allOf']) {
    for (const sub of (schema[key] as unknown[] | undefined) ?? []) found.push([`<${key}>`, sub]);
  }
  return found;
}

/**
 * Refuses a schema with a number that has no minimum or maximum: a request's number reaches
 * SQL, and a value beyond what the column holds (1e19, 1e308, Infinity from `1e400`) is an
 * error of the database (MariaDB: "Out of range value") where it must be a 400 naming the field.
 * An enum or a const bounds itself.
 */
function assertBoundedNumbers(where: string, schema: unknown): void {
  if (!schema || typeof schema !== 'object') return;
  const node = schema as Record<string, unknown>;
  const types = Array.isArray(node.type) ? node.type : [node.type];
  if ((types.includes('integer') || types.includes('number')) && !('enum' in node) && !('const' in node)) {
    if (!isBound(node.minimum ?? node.exclusiveMinimum) || !isBound(node.maximum ?? node.exclusiveMaximum)) {
      throw new Error(`${where}: a number needs a minimum and a maximum, within ±${WIDEST_NUMBER_BOUND} and what its database column holds`);
    }
  }
  for (const [step, sub] of subSchemas(node)) assertBoundedNumbers(`${where}${step}`, sub);
}

export interface Guard {
  (value: unknown): unknown;
}

/** `part` names where the value sits in messages: a route part, or a field of the body checked on its own (`body.args`). */
export function compileGuard(part: 'body' | 'query' | 'params' | `body.${string}`, schema: JSONSchema): Guard {
  assertBoundedNumbers(part, schema);
  const coercing = part === 'query' || part === 'params';
  const validate = compileOnce(coercing ? coercingAjv : ajv, schema as object);
  // ajv coerces "1e400" to Infinity and then skips the bounds of a number that is not finite:
  // the coerced value is checked once more, without coercion, which refuses it.
  const recheck = coercing ? compileOnce(ajv, schema as object) : null;
  // a body whose every field is optional may be left out (`POST …/reject` without a reason)
  const fallback = part === 'body' && !(schema as { required?: unknown[] }).required?.length ? {} : undefined;
  return (value) => {
    const candidate = value ?? fallback;
    if (candidate === undefined) {
      throw new BadRequestError('request body is required');
    }
    if (!validate(candidate)) throw new BadRequestError(describe(part, validate.errors![0]!));
    if (recheck && !recheck(candidate)) throw new BadRequestError(describe(part, recheck.errors![0]!));
    return candidate;
  };
}
