/** Small values that satisfy a route's JSON schemas, so a request gets past its guards. */
import { Ajv } from 'ajv';
import type { JSONSchema } from '../../src/http/guard.ts';

const ajv = new Ajv({ strict: false });
export const STRING_CANDIDATES = ['abcdefghijklmnop', 'someone@example.test', 'https://example.test', 'org_main', 'success'];

/** A small value that satisfies the schema, so the request gets past its guard. */
export function sample(schema: JSONSchema | undefined): unknown {
  if (!schema || typeof schema === 'boolean') return undefined;
  const s = schema as Record<string, any>;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'object': {
      const value: Record<string, unknown> = {};
      const keys: string[] = s.required?.length ? s.required : s.minProperties ? Object.keys(s.properties ?? {}).slice(0, s.minProperties) : [];
      for (const key of keys) value[key] = sample(s.properties?.[key]);
      return value;
    }
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items));
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'string': {
      const valid = STRING_CANDIDATES.find((candidate) => ajv.validate(s, candidate));
      if (!valid) throw new Error(`no sample string for ${JSON.stringify(s)}`);
      return valid;
    }
    default:
      return undefined;
  }
}
