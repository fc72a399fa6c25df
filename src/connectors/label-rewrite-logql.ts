/**
 * Label rules on LogQL, by its syntax tree (Grafana's lezer grammar, src/connectors/logql/), never
 * by patterns over the text: every stream selector of a query, in log and metric queries, binary
 * operations and `or`/`and`/`unless` alike, gets the rule's matchers after its own. A matcher of
 * the query on the same label stays beside the rule's and Loki ANDs them, and pipeline stages
 * (`| label_format`, `| line_format`, label filters) act on lines the selector has already chosen, so
 * nothing in a query widens what a rule lets through. Several rules are answered as their union: by
 * one regex matcher when each is a single `=` or `=~` matcher on the same label (Loki anchors label
 * regexes, so it is exact); otherwise a metric query becomes one restricted query per rule joined
 * with `or` (as PromQL's, label-rewrite.ts), and a log query one restricted query per rule whose
 * lines the caller merges (backends/loki-union.ts), at most MAX_UNION_RULES.
 */
import type { NodeType, SyntaxNode } from '@lezer/common';
import { parser } from './logql/parser.ts';
import { BadRequestError } from '../errors.ts';
import {
  matchersText,
  renderMatcher,
  readQuery,
  rewriteCache,
  rulesKey,
  strictParser,
  typeIds,
  unionMatcher,
  walkQuery,
  type LabelMatcher,
  type NodeVisitor,
  type QueryGrammar,
} from './label-rewrite.ts';

export const LOGQL: QueryGrammar = { parser: strictParser(parser), doesNotParse: 'does not parse as LogQL' };

const parseError = (what: string, at: number) => new BadRequestError(`${what} ${LOGQL.doesNotParse} at character ${at + 1}`);

/** A parsed query: where each stream selector ends its matchers, in order, and whether it is a log query (lines) rather than a metric one. */
interface Analysed {
  ends: number[];
  log: boolean;
}

const LOGQL_TYPES = typeIds(parser.nodeSet.types);
const SELECTOR = LOGQL_TYPES.get('Selector')!;
const MATCHER = LOGQL_TYPES.get('Matcher')!;
const LOG_EXPR = LOGQL_TYPES.get('LogExpr')!;
const METRIC_EXPR = LOGQL_TYPES.get('MetricExpr')!;

/**
 * One walk of the parsed query: refuses what does not parse, and finds the end of each stream
 * selector's last matcher (a label filter's matcher in a pipeline is not one: it lies after its selector).
 */
class Analyser implements NodeVisitor, Analysed {
  readonly ends: number[] = [];
  log = false;
  // in the walk's order the query's top expression comes before any expression inside it
  private topSeen = false;
  private selectorTo = -1;

  constructor(private readonly what: string) {}

  node(type: NodeType, from: number, to: number): void {
    if (type.isError) throw parseError(this.what, from);
    const id = type.id;
    const ends = this.ends;
    if (!this.topSeen && (id === LOG_EXPR || id === METRIC_EXPR)) {
      this.topSeen = true;
      this.log = id === LOG_EXPR;
    }
    if (id === SELECTOR) {
      if (ends.length > 0 && ends[ends.length - 1]! < 0) throw new BadRequestError(`${this.what} has a stream selector without label matchers`);
      ends.push(-1);
      this.selectorTo = to;
    } else if (id === MATCHER && to <= this.selectorTo) ends[ends.length - 1] = to;
  }
}

function analyse(text: string, what: string): Analysed {
  const analyser = new Analyser(what);
  walkQuery(LOGQL, text, what, analyser);
  const { ends } = analyser;
  if (ends.length > 0 && ends[ends.length - 1]! < 0) throw new BadRequestError(`${what} has a stream selector without label matchers`);
  return analyser;
}

/** The query with `matchers` (a rule's, as text) after the last matcher of each stream selector. */
function spliceMatchers(query: string, ends: readonly number[], matchers: string): string {
  const added = `, ${matchers}`;
  let out = '';
  let from = 0;
  for (const at of ends) {
    out += query.slice(from, at) + added;
    from = at;
  }
  return out + query.slice(from);
}

/** The matchers that stand for the rules in one selector: one rule's own, or the single regex matcher of their union; null when no one matcher set is their union. */
export function logRuleMatchers(rules: readonly LabelMatcher[][]): LabelMatcher[] | null {
  if (rules.length === 0) throw new Error('logRuleMatchers needs at least one rule');
  if (rules.length === 1) return rules[0]!;
  const union = unionMatcher(rules);
  return union && [union];
}

/** The most rules a Loki read is answered under when they are not one matcher on the same label: one query (or one `or` operand) each. */
export const MAX_UNION_RULES = 10;

/** Refuses rules beyond MAX_UNION_RULES when each takes a query of its own. */
export function checkUnionSize(rules: readonly LabelMatcher[][]): void {
  if (rules.length > MAX_UNION_RULES)
    throw new BadRequestError(
      `${rules.length} label rules apply to you on this Loki connector, and a read is answered as the union of at most ${MAX_UNION_RULES} rules that are not one matcher on the same label`,
    );
}

/** Restricted queries already made, keyed by the rules' canonical form and the query (a dashboard's panels asked again). */
const rewrites = rewriteCache<readonly string[]>();

/**
 * The queries that read what the rules let `query` read. One query when one matcher set stands
 * for the rules (added to every stream selector), or for a metric query under several rules (one
 * restricted query per rule, joined with `or`). A log query under several rules that no matcher
 * set unites gives one restricted query per rule, whose answers the caller merges (their lines'
 * union). A query without a stream selector (`vector(1)`) is left as it is. `what` names it in a 400.
 */
export function restrictLogQueries(query: string, rules: readonly LabelMatcher[][], what = 'the query'): readonly string[] {
  if (rules.length === 0) throw new Error('restrictLogQueries needs at least one rule');
  const key = rulesKey(rules);
  const hash = rewrites.hash(key, query);
  const known = rewrites.get(hash, key, query);
  if (known) return known;
  const { ends, log } = analyse(query, what);
  let restricted: readonly string[];
  const matchers = ends.length === 0 ? null : logRuleMatchers(rules);
  if (ends.length === 0) restricted = [query];
  else if (matchers) {
    // a rule's own matchers are rendered once a rule; a union's matcher is made for this call
    const text = matchers === rules[0] ? matchersText(matchers) : matchers.map(renderMatcher).join(', ');
    restricted = [spliceMatchers(query, ends, text)];
  } else {
    checkUnionSize(rules);
    const each = rules.map((rule) => spliceMatchers(query, ends, matchersText(rule)));
    // as PromQL's union (label-rewrite.ts): each on lines of its own, so a comment at the end cannot swallow the parenthesis
    restricted = log ? each : [each.map((one) => `(\n${one}\n)`).join(' or ')];
  }
  rewrites.set(hash, key, query, restricted);
  return restricted;
}

/** The one query that reads what the rules let `query` read; for rules whose union needs a query each, see restrictLogQueries. */
export function restrictLogQuery(query: string, rules: readonly LabelMatcher[][], what = 'the query'): string {
  const restricted = restrictLogQueries(query, rules, what);
  if (restricted.length !== 1) throw new Error('restrictLogQuery: these rules need one query each');
  return restricted[0]!;
}

/**
 * A stream selector alone, `{app="checkout"}`, as the labels and label-values APIs take it in
 * `query` and the series API in `match[]`; `what` names it in the 400.
 */
export function checkStreamSelector(text: string, what: string): void {
  const top = readQuery(LOGQL, text, what).topNode;
  const expressions: SyntaxNode[] = [];
  for (let child = top.firstChild; child; child = child.nextSibling) if (child.name !== 'LineComment') expressions.push(child);
  const log = expressions.length === 1 ? expressions[0]!.getChild('LogExpr') : null;
  if (!log || log.firstChild?.name !== 'Selector' || log.firstChild.nextSibling)
    throw new BadRequestError(`${what} must be a stream selector such as {app="checkout"}`);
}
