/**
 * Label rules on PromQL, by its syntax tree (@prometheus-io/lezer-promql), never by patterns over
 * the text: a rule's selector is parsed into label matchers, and a query is restricted by adding
 * those matchers to every vector and matrix selector it holds (in subqueries and function
 * arguments too). A matcher the query already has on the same label stays beside the rule's, and
 * Prometheus ANDs them, so nothing in a query widens what a rule lets through. With several rules
 * the answer is their union: one query per rule joined with `or`, or a single regex matcher when
 * every rule is one matcher on the same label. What cannot be restricted is refused (400).
 */
import { TreeBuffer, type NodeType, type SyntaxNode, type Tree } from '@lezer/common';
import type { LRParser } from '@lezer/lr';
import { randomInt } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { parser } from '@prometheus-io/lezer-promql';
import { BadRequestError } from '../errors.ts';
import { ParseBudget } from './parse-budget.ts';

export type MatchOp = '=' | '!=' | '=~' | '!~';

export interface LabelMatcher {
  name: string;
  op: MatchOp;
  value: string;
}

/** The longest selector a rule may hold (the column's size). */
export const MAX_SELECTOR_LENGTH = 2048;

/**
 * Functions whose answer reads series the query does not select: `info()` joins the `target_info`
 * series matching its own argument, which a rule's matchers cannot reach.
 */
const UNRESTRICTABLE_FUNCTIONS: ReadonlyMap<string, string> = new Map([['Info', 'info() reads series its selectors do not name']]);

/** The id of each named node type of a grammar. */
export function typeIds(types: readonly NodeType[]): ReadonlyMap<string, number> {
  const ids = new Map<string, number>();
  for (const type of types) if (!type.isAnonymous) ids.set(type.name, type.id);
  return ids;
}

/** Receives the nodes of a tree in a walk. */
export interface NodeVisitor {
  node(type: NodeType, from: number, to: number): void;
}

/** A query longer than this is refused before it is parsed. */
export const MAX_QUERY_LENGTH = 64 * 1024;

/**
 * How long a query's parse may hold the event loop (see ParseBudget): the densest query the
 * proxy takes (64 KiB) parses in under 20 ms once the parser's code is compiled (grammar-warmup.ts),
 * while some shapes of a malformed query take the parser far longer (thousands of nested
 * aggregations: about half a second).
 */
export const PARSE_BUDGET_MS = 100;

/** How often the parse looks at its budget, in parser steps (a step reads about one token). */
const STEPS_PER_BUDGET_LOOK = 32;

/** A grammar queries are read with, and how a 400 says a text does not parse in it. */
export interface QueryGrammar {
  /** The grammar's parser, strict (see strictParser). */
  readonly parser: LRParser;
  /** The words after the query's name in a 400: `does not parse as LogQL`. */
  readonly doesNotParse: string;
}

/**
 * The grammar's parser made strict: it stops at the first error, instead of searching for ways to
 * recover from it, which on a malformed query of 64 KiB took over a second of the event loop.
 * A strict parse either throws or gives a tree without error nodes.
 */
export function strictParser(parser: LRParser): LRParser {
  const strict = parser.configure({ strict: true });
  // configure() copies the parser property by property into an object V8 keeps as a dictionary,
  // which parses half as fast; V8 turns an object back into a fast one once it is a prototype in use
  function Prototype() {}
  Prototype.prototype = strict;
  Reflect.construct(Prototype, []);
  return strict;
}

/**
 * The tree of `text` in the grammar, or a 400 naming the query (`what`): longer than
 * MAX_QUERY_LENGTH, not parsing (at the character where the parser stopped), nested deeper than
 * the parser can build a tree of, or taking longer than `budgetMs` to read (see ParseBudget).
 */
export function readQuery(grammar: QueryGrammar, text: string, what: string, budgetMs = PARSE_BUDGET_MS): Tree {
  if (text.length > MAX_QUERY_LENGTH) throw new BadRequestError(`${what} is longer than ${MAX_QUERY_LENGTH} characters`);
  const parse = grammar.parser.startParse(text);
  const budget = new ParseBudget(budgetMs);
  try {
    for (let steps = 1; ; steps++) {
      const tree = parse.advance();
      if (tree) return tree;
      if (steps % STEPS_PER_BUDGET_LOOK === 0 && budget.spent()) throw new BadRequestError(`${what} is too complex: reading it takes over ${budgetMs} ms`);
    }
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    if (err instanceof SyntaxError) throw new BadRequestError(`${what} ${grammar.doesNotParse} at character ${parse.parsedPos + 1}`);
    // the tree is built by recursion, which a deep enough nesting of expressions exhausts
    if (err instanceof RangeError) throw new BadRequestError(`${what} is nested too deeply to read`);
    throw err;
  }
}

/**
 * Walks the tree of `text` in the grammar with `visitor` (see readQuery for what is refused). The
 * grammar's tree is read as data: should it hold what the walk cannot read, the query is refused
 * (400), never the request failed.
 */
export function walkQuery(grammar: QueryGrammar, text: string, what: string, visitor: NodeVisitor): void {
  const tree = readQuery(grammar, text, what);
  try {
    walkTree(tree, visitor);
  } catch (err) {
    if (err instanceof BadRequestError) throw err;
    throw new BadRequestError(`${what} could not be read by its grammar`);
  }
}

/**
 * Every node of a parsed tree that a TreeCursor visits, in its order (parents before children,
 * anonymous nodes of the tree skipped, their children not), read straight from the tree and its
 * buffers: no node object or cursor step per node. The PromQL and LogQL parsers mount no trees.
 */
export function walkTree(tree: Tree, visitor: NodeVisitor): void {
  visitor.node(tree.type, 0, tree.length);
  walkChildren(tree, 0, visitor);
}

function walkChildren(tree: Tree, start: number, visitor: NodeVisitor): void {
  const { children, positions } = tree;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    const at = start + positions[i]!;
    if (child instanceof TreeBuffer) {
      const { buffer } = child;
      const { types } = child.set;
      for (let j = 0; j < buffer.length; j += 4) visitor.node(types[buffer[j]!]!, at + buffer[j + 1]!, at + buffer[j + 2]!);
    } else {
      if (!child.type.isAnonymous) visitor.node(child.type, at, at + child.length);
      walkChildren(child, at, visitor);
    }
  }
}

const ESCAPES: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"' };

/** The value of a PromQL string literal (Go's quoting: escapes in "…" and '…', none in `…`); null when it is malformed. */
export function unquote(literal: string): string | null {
  const quote = literal[0];
  if (literal.length < 2 || literal[literal.length - 1] !== quote) return null;
  const body = literal.slice(1, -1);
  if (quote === '`') return body.includes('`') ? null : body;
  if (quote !== '"' && quote !== "'") return null;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char === quote || char === '\n') return null;
    if (char !== '\\') {
      out += char;
      continue;
    }
    const next = body[++i];
    if (next === undefined) return null;
    const simple = ESCAPES[next];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const hex = { x: 2, u: 4, U: 8 }[next as 'x' | 'u' | 'U'];
    const digits = hex ? body.slice(i + 1, i + 1 + hex) : body.slice(i, i + 3);
    if (hex ? !/^[0-9a-fA-F]+$/.test(digits) || digits.length !== hex : !/^[0-7]{3}$/.test(digits)) return null;
    const code = parseInt(digits, hex ? 16 : 8);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return null;
    out += String.fromCodePoint(code);
    i += hex ? hex : 2;
  }
  return out;
}

/** A matcher as PromQL text: the value double-quoted (JSON's escapes are Go's). */
export const renderMatcher = (matcher: LabelMatcher) => `${matcher.name}${matcher.op}${JSON.stringify(matcher.value)}`;

export const renderSelector = (matchers: readonly LabelMatcher[]) => `{${matchers.map(renderMatcher).join(', ')}}`;

export const PROMQL: QueryGrammar = { parser: strictParser(parser), doesNotParse: 'does not parse' };

const parseTree = (text: string, what: string) => readQuery(PROMQL, text, what);

function matcherOf(node: SyntaxNode, text: string, what: string): LabelMatcher {
  if (node.name !== 'UnquotedLabelMatcher') throw new BadRequestError(`${what} may hold only label matchers such as namespace="checkout"`);
  const name = node.getChild('LabelName');
  const op = node.getChild('MatchOp');
  const literal = node.getChild('StringLiteral');
  const value = literal && unquote(text.slice(literal.from, literal.to));
  if (!name || !op || value === null || value === undefined) throw new BadRequestError(`${what} has a malformed matcher`);
  const matcher = { name: text.slice(name.from, name.to), op: text.slice(op.from, op.to) as MatchOp, value };
  if (matcher.op === '=~' || matcher.op === '!~') {
    try {
      new RegExp(`^(?:${value})$`);
    } catch {
      throw new BadRequestError(`${what} has an invalid regular expression for ${matcher.name}`);
    }
  }
  return matcher;
}

/**
 * The label matchers of a rule's selector, `{namespace="checkout", env=~"prod|staging"}`: a
 * label-matcher set alone (no metric name, modifier or operator), at least one matcher. `what`
 * names it in the 400 (`body.rules[2].selector`).
 */
export function parseSelector(text: string, what: string): LabelMatcher[] {
  if (text.length > MAX_SELECTOR_LENGTH) throw new BadRequestError(`${what} is longer than ${MAX_SELECTOR_LENGTH} characters`);
  const top = onlyExpression(parseTree(text, what).topNode);
  if (!top || top.name !== 'VectorSelector' || top.firstChild?.name !== 'LabelMatchers') {
    throw new BadRequestError(`${what} must be a label-matcher set such as {namespace="checkout"}`);
  }
  const matchers = top.firstChild.getChildren('UnquotedLabelMatcher');
  if (matchers.length === 0 || matchers.length !== countChildren(top.firstChild)) {
    throw new BadRequestError(`${what} must hold label matchers such as namespace="checkout", and nothing else`);
  }
  return matchers.map((node) => matcherOf(node, text, what));
}

/** The one expression of a parsed text, comments aside. */
function onlyExpression(top: SyntaxNode): SyntaxNode | null {
  const expressions: SyntaxNode[] = [];
  for (let child = top.firstChild; child; child = child.nextSibling) if (child.name !== 'LineComment') expressions.push(child);
  return expressions.length === 1 ? expressions[0]! : null;
}

function countChildren(node: SyntaxNode): number {
  let count = 0;
  for (let child = node.firstChild; child; child = child.nextSibling) if (child.name !== 'LineComment') count++;
  return count;
}

/** The rules' selectors as the policy gives them (canonical, checked on save), parsed once. */
const storedSelectors = new LRUCache<string, LabelMatcher[]>({ max: 10_000 });

function storedSelector(text: string): LabelMatcher[] {
  let matchers = storedSelectors.get(text);
  if (!matchers) {
    matchers = parseSelector(text, 'a stored label rule');
    storedSelectors.set(text, matchers);
  }
  return matchers;
}

export const matchersOfRules = (selectors: readonly string[]) => selectors.map(storedSelector);

const PROMQL_TYPES = typeIds(parser.nodeSet.types);
const VECTOR_SELECTOR = PROMQL_TYPES.get('VectorSelector')!;
const LABEL_MATCHERS = PROMQL_TYPES.get('LabelMatchers')!;
const LINE_COMMENT = PROMQL_TYPES.get('LineComment')!;
/** UNRESTRICTABLE_FUNCTIONS by node type id. */
const UNRESTRICTABLE_TYPES: readonly (string | undefined)[] = parser.nodeSet.types.map((type) =>
  type.isAnonymous ? undefined : UNRESTRICTABLE_FUNCTIONS.get(type.name),
);

/**
 * Where rule matchers go in a query, two numbers an insertion: the offset after which they go,
 * then how: braced (a selector without matchers), after a comma (after its last matcher), or bare
 * (inside an empty `{`).
 */
const BRACES = 0;
const COMMA = 1;
const BARE = 2;

/**
 * The walk that finds the insertions restricting every vector selector of a query, and refuses
 * what does not parse (at the first error) and what cannot be restricted.
 */
class InsertionFinder implements NodeVisitor {
  readonly insertions: number[] = [];
  refusal: string | undefined = undefined;
  // the selector the walk is in (the index of its insertion, -1 before the first), and where it and its matchers end
  private current = -1;
  private selectorTo = -1;
  private matchersTo = -1;

  constructor(private readonly what: string) {}

  node(type: NodeType, from: number, to: number): void {
    if (type.isError) throw new BadRequestError(`${this.what} does not parse at character ${from + 1}`);
    const id = type.id;
    this.refusal ??= UNRESTRICTABLE_TYPES[id];
    const insertions = this.insertions;
    if (id === VECTOR_SELECTOR) {
      // without matchers: a braced set of the rule's after the metric name
      this.current = insertions.length;
      insertions.push(to, BRACES);
      this.selectorTo = to;
      this.matchersTo = -1;
    } else if (this.current >= 0 && from < this.selectorTo) {
      const at = this.current;
      if (id === LABEL_MATCHERS) {
        // an empty `{` (or one holding comments alone): just inside it
        insertions[at] = from + 1;
        insertions[at + 1] = BARE;
        this.matchersTo = to;
      } else if (from < this.matchersTo && id !== LINE_COMMENT) {
        // after the last matcher (a trailing comma or a comment may follow)
        insertions[at] = insertions[at + 1] === COMMA ? Math.max(insertions[at]!, to) : to;
        insertions[at + 1] = COMMA;
      }
    }
  }
}

/** The insertions that restrict every vector selector of a query (see InsertionFinder), in one walk of its tree. */
function insertionsOf(text: string, what: string): number[] {
  const finder = new InsertionFinder(what);
  walkQuery(PROMQL, text, what, finder);
  if (finder.refusal) throw new BadRequestError(`label rules apply to this connector, and ${finder.refusal}`);
  return finder.insertions;
}

function splice(text: string, insertions: readonly number[], matchers: string): string {
  const braced = `{${matchers}}`;
  const comma = `, ${matchers}`;
  let out = '';
  let from = 0;
  for (let i = 0; i < insertions.length; i += 2) {
    const at = insertions[i]!;
    const how = insertions[i + 1]!;
    out += text.slice(from, at);
    out += how === BRACES ? braced : how === COMMA ? comma : matchers;
    from = at;
  }
  return out + text.slice(from);
}

/**
 * One matcher equal to the union of the rules, when each rule is a single `=` or `=~` matcher on
 * the same label: `namespace=~"checkout|payments"` (Prometheus anchors regexes, so it is exact).
 */
export function unionMatcher(rules: readonly LabelMatcher[][]): LabelMatcher | null {
  const name = rules[0]?.[0]?.name;
  if (!rules.every((rule) => rule.length === 1 && rule[0]!.name === name && (rule[0]!.op === '=' || rule[0]!.op === '=~'))) return null;
  const alternatives = rules.map(([matcher]) => (matcher!.op === '=' ? escapeRegex(matcher!.value) : `(?:${matcher!.value})`));
  return { name: name!, op: '=~', value: alternatives.join('|') };
}

/** A literal as an RE2 regular expression. */
const escapeRegex = (value: string) => value.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * The query restricted to what the rules let through (one rule: its matchers in every selector;
 * several: their union). A query that selects no series (`1 + 1`, `time()`) is left as it is.
 * `what` names the query in a 400.
 */
export function restrictQuery(query: string, rules: readonly LabelMatcher[][], what = 'the query'): string {
  if (rules.length === 0) throw new Error('restrictQuery needs at least one rule');
  const key = rulesKey(rules);
  const hash = rewrites.hash(key, query);
  const known = rewrites.get(hash, key, query);
  if (known !== undefined) return known;
  const restricted = rewrite(query, rules, what);
  rewrites.set(hash, key, query, restricted);
  return restricted;
}

function rewrite(query: string, rules: readonly LabelMatcher[][], what: string): string {
  const insertions = insertionsOf(query, what);
  if (insertions.length === 0) return query;
  const union = rules.length > 1 ? unionMatcher(rules) : null;
  if (rules.length === 1 || union) return splice(query, insertions, union ? renderMatcher(union) : matchersText(rules[0]!));
  // each on lines of its own: a comment at the query's end must not swallow the parenthesis
  return rules.map((rule) => `(\n${splice(query, insertions, matchersText(rule))}\n)`).join(' or ');
}

/** Each rule's matchers as text, `a="b", c=~"d"`, rendered once a rule (see ruleLines). */
const ruleMatchers = new WeakMap<readonly LabelMatcher[], string>();

/** A rule's matchers as PromQL and LogQL text, comma-separated. */
export function matchersText(rule: readonly LabelMatcher[]): string {
  let text = ruleMatchers.get(rule);
  if (text === undefined) ruleMatchers.set(rule, (text = rule.map(renderMatcher).join(', ')));
  return text;
}

/** Each rule's canonical text and its line end: rules come from storedSelector's cache, so the same arrays come back and are rendered once. */
const ruleLines = new WeakMap<readonly LabelMatcher[], string>();

/** The rules' canonical form, a cache key: one selector a line. */
export function rulesKey(rules: readonly LabelMatcher[][]): string {
  let key = '';
  for (const rule of rules) {
    let line = ruleLines.get(rule);
    if (line === undefined) ruleLines.set(rule, (line = `${renderSelector(rule)}\n`));
    // one rule: the string kept, no new one a call
    key = key === '' ? line : key + line;
  }
  return key;
}

const REWRITES_MAX = 2_000;
const REWRITES_MAX_CHARS = 8 * 1024 * 1024;
/** Slots of the admission filter: the hashes of keys seen once. */
const SEEN_SLOTS = 4096;

/** FNV-1a over the UTF-16 code units of `text`, from the state `hash`: queries that differ in one value (a dashboard's variable) hash apart. */
function fnv(hash: number, text: string): number {
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash;
}

/** A restricted query kept, with the rules' canonical form and the query it answers. */
interface Rewrite<V> {
  rules: string;
  query: string;
  value: V;
}

/**
 * A bounded cache of restricted queries, keyed by the rules' canonical form and the query text:
 * a dashboard refreshing the same panels is answered by a lookup. A rewrite is kept the second
 * time its key is seen (a filter of hashes remembers the first), so queries asked once, which are
 * most of them, neither evict the repeated ones nor live on in the heap. Entries are found by the
 * key's hash, computed once a call without joining rules and query into one string, and a hit is
 * one whose rules and query are both equal to those asked (two keys of one hash share a slot, the
 * later one kept). Only successful rewrites are kept (a refusal is made again); at most
 * REWRITES_MAX entries and REWRITES_MAX_CHARS characters of keys and values.
 */
export class RewriteCache<V extends string | readonly string[]> {
  private readonly entries = new LRUCache<number, Rewrite<V>>({
    max: REWRITES_MAX,
    maxSize: REWRITES_MAX_CHARS,
    sizeCalculation: ({ rules, query, value }) =>
      rules.length + 1 + query.length + (typeof value === 'string' ? value.length : value.reduce((total, one) => total + one.length, 0)),
  });
  private readonly seen = new Uint32Array(SEEN_SLOTS);
  /**
   * The hash's starting state, drawn for each cache: which keys share a slot cannot be worked out
   * from outside, so a caller cannot craft queries that evict another's rewrites (a shared slot
   * costs only a miss: a hit compares the whole key).
   */
  private readonly seed = randomInt(2 ** 32);

  /** The hash of a key (never 0), for get and set. */
  hash(rules: string, query: string): number {
    return fnv(fnv(this.seed, rules), query) >>> 0 || 1;
  }

  get(hash: number, rules: string, query: string): V | undefined {
    const entry = this.entries.get(hash);
    return entry && entry.query === query && entry.rules === rules ? entry.value : undefined;
  }

  set(hash: number, rules: string, query: string, value: V): void {
    const slot = hash & (SEEN_SLOTS - 1);
    if (this.seen[slot] === hash) this.entries.set(hash, { rules, query, value });
    else this.seen[slot] = hash;
  }
}

export const rewriteCache = <V extends string | readonly string[]>() => new RewriteCache<V>();

const rewrites = rewriteCache<string>();

const MAX_MATCHES = 20;

/** A match[] that selects nothing more than a rule: the rule's matchers, and a metric name so that no matcher set is all-empty. */
const ANY_METRIC: LabelMatcher = { name: '__name__', op: '=~', value: '.+' };

/**
 * The `match[]` selectors of a label-names, label-values or series request under the rules
 * (which the backend ORs): each incoming selector intersected with each rule, or the rules
 * themselves when none comes. An incoming one must be a series selector.
 */
export function restrictMatches(incoming: readonly string[], rules: readonly LabelMatcher[][]): string[] {
  if (incoming.length > MAX_MATCHES) throw new BadRequestError(`give at most ${MAX_MATCHES} match[] selectors`);
  if (incoming.length === 0) return rules.map((rule) => renderSelector([ANY_METRIC, ...rule]));
  const restricted: string[] = [];
  for (const [index, selector] of incoming.entries()) {
    const what = `match[] ${index + 1}`;
    const top = onlyExpression(parseTree(selector, what).topNode);
    if (!top || top.name !== 'VectorSelector') throw new BadRequestError(`${what} must be a series selector such as up{job="api"}`);
    for (const rule of rules) restricted.push(restrictQuery(selector, [rule], what));
  }
  return restricted;
}
