/**
 * JSON request bodies, parsed from their text only after a linear scan of their shape. V8's
 * JSON.parse takes 0.2–0.6 s of the event loop for a 1 MiB body of 100,000 nested arrays, and
 * 0.1–0.2 s for one object of 90,000 members (an object past about a thousand members leaves
 * V8's fast properties); a nesting past about 5,000 levels also overflows the stack of every
 * later JSON.stringify (a dashboard's model). No route takes a body anywhere near either limit.
 */
import { BadRequestError } from '../errors.ts';

/** The deepest nesting of objects and arrays a body may hold. */
export const MAX_JSON_DEPTH = 64;
/** The most members one object of a body may hold (arrays are cheap to parse, and unbounded but for the body's size). */
export const MAX_JSON_OBJECT_MEMBERS = 1000;

const NOT_JSON = 'request body is not valid JSON';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * Refuses a body nested deeper than MAX_JSON_DEPTH or holding an object of more than
 * MAX_JSON_OBJECT_MEMBERS members. Brackets inside strings are skipped; malformed text is left
 * to JSON.parse, which refuses it anyway.
 */
function checkShape(text: string): void {
  // per open bracket: -1 for an array, else the members of the object counted so far
  const open: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
      continue;
    }
    if (code === QUOTE) {
      inString = true;
      const top = open.length - 1;
      // an object's first key opens its count; a comma counts each further member
      if (top >= 0 && open[top] === 0) open[top] = 1;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (open.length >= MAX_JSON_DEPTH) throw new BadRequestError(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
      open.push(code === OPEN_ARRAY ? -1 : 0);
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      open.pop();
    } else if (code === COMMA) {
      const top = open.length - 1;
      if (top >= 0 && open[top]! >= 0) {
        open[top]! += 1;
        if (open[top]! > MAX_JSON_OBJECT_MEMBERS) throw new BadRequestError(`request body has an object of more than ${MAX_JSON_OBJECT_MEMBERS} members`);
      }
    }
  }
}

/** What co-body's strict mode accepts: an object or an array, after RFC 8259's whitespace. */
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;
/** A `"__proto__":` key, escaped or not (@hapi/bourne's test, which koa-body's parser applied). */
const SUSPECT_PROTO_KEY =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

/** Refuses an own `__proto__` key anywhere: merged into another object, it would set that object's prototype. */
function refuseProtoKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new BadRequestError(NOT_JSON);
  return value;
}

/** The body's JSON value (an empty body is `{}`); a 400 for text that is not an object or array of the shape above. */
export function parseJsonBody(text: string): unknown {
  if (!text) return {};
  if (!OBJECT_OR_ARRAY.test(text)) throw new BadRequestError(NOT_JSON);
  checkShape(text);
  try {
    return SUSPECT_PROTO_KEY.test(text) ? JSON.parse(text, refuseProtoKeys) : JSON.parse(text);
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    throw new BadRequestError(NOT_JSON);
  }
}
