/**
 * Label rules on LogQL, by its syntax tree (@grafana/lezer-logql), never by patterns over the
 * text: every stream selector of a query, in log and metric queries, binary operations and
 * `or`/`and`/`unless` alike, gets the rule's matchers after its own. A matcher of the query on
 * the same label stays beside the rule's and Loki ANDs them, and pipeline stages
 * (`| label_format`, `| line_format`, label filters) act on lines the selector has already
 * chosen, so nothing in a query widens what a rule lets through. Several rules are answered by one
 * regex matcher when each is a single `=` or `=~` matcher on the same label (Loki anchors label
 * regexes, so it is exact); any other set of several rules is refused (400), as no single LogQL
 * query reads exactly their union.
 */
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@grafana/lezer-logql';
import { BadRequestError } from '../errors.ts';
import { renderMatcher, unionMatcher, type LabelMatcher } from './label-rewrite.ts';

/** A query longer than this is refused before it is parsed. */
export const MAX_LOG_QUERY_LENGTH = 64 * 1024;

function parseLogQL(text: string, what: string) {
  if (text.length > MAX_LOG_QUERY_LENGTH) throw new BadRequestError(`${what} is longer than ${MAX_LOG_QUERY_LENGTH} characters`);
  const tree = parser.parse(text);
  const cursor = tree.cursor();
  do {
    if (cursor.type.isError) throw new BadRequestError(`${what} does not parse as LogQL at character ${cursor.from + 1}`);
  } while (cursor.next());
  return tree;
}

/** The last label matcher of a stream selector: the rule's matchers go right after it. */
function lastMatcherOf(selector: SyntaxNode, what: string): SyntaxNode {
  const matchers = selector.getChild('Matchers');
  const last = matchers?.getChildren('Matcher').at(-1);
  if (!last) throw new BadRequestError(`${what} has a stream selector without label matchers`);
  return last;
}

/** Where each stream selector of a parsed query ends its matchers, in order. */
function selectorEnds(text: string, what: string): number[] {
  const ends: number[] = [];
  const cursor = parseLogQL(text, what).cursor();
  do {
    if (cursor.name === 'Selector') ends.push(lastMatcherOf(cursor.node, what).to);
  } while (cursor.next());
  return ends;
}

/** The matchers that stand for the rules: one rule's own, or the single regex matcher of their union. */
export function logRuleMatchers(rules: readonly LabelMatcher[][]): LabelMatcher[] {
  if (rules.length === 0) throw new Error('logRuleMatchers needs at least one rule');
  if (rules.length === 1) return rules[0]!;
  const union = unionMatcher(rules);
  if (!union)
    throw new BadRequestError(
      'several label rules apply to you on this Loki connector, and LogQL can read their union exactly only when each is one = or =~ matcher on the same label',
    );
  return [union];
}

/** The query with `matchers` added to every stream selector; a query without one (`vector(1)`) is left as it is. */
export function restrictLogQuery(query: string, rules: readonly LabelMatcher[][], what = 'the query'): string {
  const ends = selectorEnds(query, what);
  if (ends.length === 0) return query;
  const added = `, ${logRuleMatchers(rules).map(renderMatcher).join(', ')}`;
  let out = '';
  let from = 0;
  for (const at of ends) {
    out += query.slice(from, at) + added;
    from = at;
  }
  return out + query.slice(from);
}

/**
 * A stream selector alone, `{app="checkout"}`, as the labels and label-values APIs take it in
 * `query` and the series API in `match[]`; `what` names it in the 400.
 */
export function checkStreamSelector(text: string, what: string): void {
  const top = parseLogQL(text, what).topNode;
  const expressions: SyntaxNode[] = [];
  for (let child = top.firstChild; child; child = child.nextSibling) if (child.name !== 'LineComment') expressions.push(child);
  const log = expressions.length === 1 ? expressions[0]!.getChild('LogExpr') : null;
  if (!log || log.firstChild?.name !== 'Selector' || log.firstChild.nextSibling)
    throw new BadRequestError(`${what} must be a stream selector such as {app="checkout"}`);
}
