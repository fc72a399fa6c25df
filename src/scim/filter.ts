/**
 * SCIM list filters (RFC 7644 §3.4.2.2), parsed by scim2-parse-filter and checked against what
 * this server supports: `eq`, `co`, `sw` on strings, `pr`, and `and`/`or` over the attributes a
 * resource type names. Anything else (another attribute or operator, `not`, a number, a filter
 * too large) is a 400 `invalidFilter`. The result names attributes by their key, never a column:
 * the store maps keys to columns and binds every value as a parameter.
 */
import { parse, type Filter } from 'scim2-parse-filter';
import { invalidFilter } from './errors.ts';

export type FilterTerm<K extends string> =
  { op: 'eq' | 'co' | 'sw'; attribute: K; value: string } | { op: 'pr'; attribute: K } | { op: 'and' | 'or'; terms: Array<FilterTerm<K>> };

/** The longest filter accepted, and the most comparisons it may hold. */
export const MAX_FILTER_LENGTH = 1000;
const MAX_COMPARISONS = 20;

const CORE_URN_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:';

/**
 * `attributes`: a resource type's filterable attributes, by their lower-cased SCIM path
 * (`username`, `emails.value`), each mapped to its key; `urn`: the resource's core schema name,
 * which may prefix a path.
 */
export function parseFilter<K extends string>(text: string, attributes: Readonly<Record<string, K>>, resource: 'User' | 'Group'): FilterTerm<K> {
  if (text.length > MAX_FILTER_LENGTH) throw invalidFilter(`filter is longer than ${MAX_FILTER_LENGTH} characters`);
  let ast: Filter;
  try {
    ast = parse(text);
  } catch {
    throw invalidFilter('filter is not a valid SCIM filter expression');
  }
  let comparisons = 0;
  const attributeOf = (path: string): K => {
    let name = path.toLowerCase();
    const urn = `${CORE_URN_PREFIX}${resource}:`.toLowerCase();
    if (name.startsWith(urn)) name = name.slice(urn.length);
    const key = attributes[name];
    if (key === undefined) throw invalidFilter(`filtering on ${path} is not supported (supported: ${Object.keys(attributes).join(', ')})`);
    return key;
  };
  const check = (node: Filter, prefix: string): FilterTerm<K> => {
    comparisons += 1;
    if (comparisons > MAX_COMPARISONS) throw invalidFilter(`filter has more than ${MAX_COMPARISONS} terms`);
    switch (node.op) {
      case 'and':
      case 'or':
        return { op: node.op, terms: node.filters.map((inner) => check(inner, prefix)) };
      case 'pr':
        return { op: 'pr', attribute: attributeOf(prefix + node.attrPath) };
      case 'eq':
      case 'co':
      case 'sw': {
        const attribute = attributeOf(prefix + node.attrPath);
        if (typeof node.compValue !== 'string') throw invalidFilter(`${node.attrPath} is a string: compare it with a quoted value`);
        return { op: node.op, attribute, value: node.compValue };
      }
      case '[]':
        // emails[value eq "…"]: the same as emails.value eq "…"; no nesting
        if (prefix) throw invalidFilter('nested value filters are not supported');
        return check(node.valFilter, `${node.attrPath}.`);
      default:
        throw invalidFilter(`operator ${node.op} is not supported (supported: eq, co, sw, pr, and, or)`);
    }
  };
  return check(ast, '');
}
