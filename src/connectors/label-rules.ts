/**
 * Label rules at read time: the policy (authz/label_rules) says which selectors apply to the
 * caller on a connector, and every read of a metrics or logs connector goes through here, in the
 * connector's query language. PromQL and LogQL queries are restricted by their syntax tree
 * (label-rewrite.ts, label-rewrite-logql.ts), a Prometheus or Loki label or series request gets
 * its selectors from the rules; on Loki, under rules that are not one matcher on the same label, a
 * log query or a labels request is sent once per rule and the answers merged (their union);
 * a VictoriaLogs read gets the rules as its `extra_stream_filters`,
 * which VictoriaLogs ANDs with the query and every subquery in it. A path that cannot be
 * restricted is refused. Once a connector has a rule, a caller no rule names is refused (403),
 * except org and connector Admins. The answer says which applied in the header
 * `X-Gatehouse-Label-Rules: none | bypass | applied`.
 */
import type { Context } from 'koa';
import type { Subject } from '../authz/types.ts';
import { BadRequestError, ForbiddenError } from '../errors.ts';
import type { Services } from '../services.ts';
import { checkStreamSelector, checkUnionSize, logRuleMatchers, restrictLogQueries, restrictLogQuery } from './label-rewrite-logql.ts';
import { matchersOfRules, renderMatcher, renderSelector, restrictMatches, restrictQuery, type LabelMatcher } from './label-rewrite.ts';
import { jsonDataOf } from './presenter.ts';
import { logBackendOf } from './settings.ts';
import type { ConnectorRow } from './store.ts';

export const LABEL_RULES_HEADER = 'X-Gatehouse-Label-Rules';

/** What a read may see: everything (`none`, `bypass`), or what one of `rules` matches (`applied`). */
export interface ReadRestriction {
  mode: 'none' | 'bypass' | 'applied';
  rules: LabelMatcher[][];
}

export const NO_RESTRICTION: ReadRestriction = { mode: 'none', rules: [] };

/** The connector types label rules may be saved on and are applied to. */
export const RULED_TYPES: ReadonlySet<string> = new Set(['tsmetrics', 'logstore']);
export const RULED_TYPES_ONLY = 'label rules are supported on metrics and logs connectors';

/** The query language a connector's reads speak: PromQL (metrics), LogQL (Loki) or LogsQL (VictoriaLogs). */
export type ReadLanguage = 'promql' | 'logql' | 'logsql';

export function readLanguageOf(connector: ConnectorRow): ReadLanguage {
  if (connector.type !== 'logstore') return 'promql';
  return logBackendOf(jsonDataOf(connector)) === 'victorialogs' ? 'logsql' : 'logql';
}

/** A query as the restriction lets it read: its text restricted, or (LogsQL) as given with VictoriaLogs' stream filter beside it. */
export interface RestrictedRead {
  query: string;
  /** VictoriaLogs' `extra_stream_filters`, made from the rules only. */
  streamFilter?: string;
  /**
   * A LogQL log query under Loki rules that no one query unites: one restricted query per rule
   * (`query` is the first), sent together, whose lines are merged (backends/loki-union.ts).
   */
  union?: readonly string[];
}

/**
 * The rules as one VictoriaLogs stream filter, their union: each rule's matchers ANDed (`,`),
 * the rules OR-ed (`or` binds looser than `,` there), `{namespace="checkout", env="prod" or team="payments"}`.
 */
export const streamFilterOf = (rules: readonly LabelMatcher[][]) => `{${rules.map((rule) => rule.map(renderMatcher).join(', ')).join(' or ')}}`;

/** A query in the connector's language as the restriction lets it read; `what` names it in a 400. */
export function restrictedRead(restriction: ReadRestriction, language: ReadLanguage, query: string, what: string): RestrictedRead {
  if (restriction.mode !== 'applied') return { query };
  if (language === 'promql') return { query: restrictQuery(query, restriction.rules, what) };
  if (language === 'logql') {
    const queries = restrictLogQueries(query, restriction.rules, what);
    return queries.length === 1 ? { query: queries[0]! } : { query: queries[0]!, union: queries };
  }
  return { query, streamFilter: streamFilterOf(restriction.rules) };
}

/**
 * The restriction on `subject`'s reads of the connector, from the policy; 403 when the connector
 * has rules and none names the subject, its teams or its org role. Call it after authorize().
 */
export async function readRestriction(services: Services, subject: Subject, orgId: string, connector: ConnectorRow): Promise<ReadRestriction> {
  const answer = await services.engine.labelRules({ subject, org_id: orgId, resource: { kind: 'connectors', uid: connector.uid } });
  if (answer.mode === 'denied') throw new ForbiddenError('permission denied: this connector has label rules, and none of them applies to you');
  if (answer.mode !== 'applied') return { mode: answer.mode, rules: [] };
  // rules are saved on metrics and logs connectors only: any other reader has no way to apply them
  if (!RULED_TYPES.has(connector.type)) throw new BadRequestError(RULED_TYPES_ONLY);
  return { mode: 'applied', rules: matchersOfRules(answer.selectors) };
}

/** Says in the response which restriction applied. */
export function announceRestriction(ctx: Context, restriction: ReadRestriction): void {
  ctx.set(LABEL_RULES_HEADER, restriction.mode);
}

const QUERY_PATHS = new Set(['api/v1/query', 'api/v1/query_range']);
const MATCH_PATH = /^api\/v1\/(labels|series|label\/[^/]+\/values)$/;
/** The parameters each kind of path takes under rules: the backend's own; anything else could mean something to another backend. */
const QUERY_PARAMS = new Set(['query', 'time', 'start', 'end', 'step', 'timeout', 'limit', 'stats']);
const MATCH_PARAMS = new Set(['match[]', 'start', 'end', 'limit']);
const LOKI_QUERY_PATHS = new Set(['loki/api/v1/query', 'loki/api/v1/query_range']);
const LOKI_QUERY_PARAMS = new Set(['query', 'time', 'start', 'end', 'since', 'step', 'interval', 'limit', 'direction']);
const LOKI_LABEL_PATH = /^loki\/api\/v1\/(labels|label\/[^/]+\/values)$/;
const LOKI_LABEL_PARAMS = new Set(['query', 'start', 'end', 'since']);
const LOKI_SERIES_PARAMS = new Set(['match[]', 'start', 'end', 'since']);
/** VictoriaLogs' read parameters; `extra_filters` and `extra_stream_filters` are the rules' alone. */
const LOGSQL_PARAMS = new Set(['query', 'time', 'start', 'end', 'step', 'limit', 'offset', 'field', 'fields_limit', 'timeout']);
const MAX_MATCHES = 20;

function acceptOnly(path: string, params: URLSearchParams, accepted: ReadonlySet<string>): void {
  for (const name of new Set(params.keys())) {
    if (!accepted.has(name)) throw new BadRequestError(`label rules apply to this connector, and ${path} takes no parameter ${name} then`);
  }
}

function theOne(params: URLSearchParams, name: string): string {
  const values = params.getAll(name);
  if (values.length !== 1) throw new BadRequestError(`give the parameter ${name} exactly once`);
  return values[0]!;
}

/** The parameters but `dropped`, in order. */
function without(params: URLSearchParams, ...dropped: string[]): URLSearchParams {
  const kept = new URLSearchParams();
  for (const [name, value] of params) if (!dropped.includes(name)) kept.append(name, value);
  return kept;
}

function prometheusParams(rules: LabelMatcher[][], path: string, params: URLSearchParams): URLSearchParams {
  const isQuery = QUERY_PATHS.has(path);
  if (!isQuery && !MATCH_PATH.test(path)) throw new BadRequestError(`label rules apply to this connector, and ${path} cannot be restricted by labels`);
  acceptOnly(path, params, isQuery ? QUERY_PARAMS : MATCH_PARAMS);
  const restricted = without(params, 'query', 'match[]');
  if (isQuery) restricted.set('query', restrictQuery(theOne(params, 'query'), rules));
  else for (const selector of restrictMatches(params.getAll('match[]'), rules)) restricted.append('match[]', selector);
  return restricted;
}

/** The parameters with `query` set to each of `queries`: one request, or one per rule whose answers are merged. */
function withQueries(params: URLSearchParams, queries: readonly string[], merge: ProxyMerge): ProxyRead {
  const each = queries.map((query) => {
    const restricted = without(params, 'query');
    restricted.set('query', query);
    return restricted;
  });
  return each.length === 1 ? { params: each[0]! } : { union: each, merge };
}

function lokiParams(rules: LabelMatcher[][], path: string, params: URLSearchParams): ProxyRead {
  if (LOKI_QUERY_PATHS.has(path)) {
    acceptOnly(path, params, LOKI_QUERY_PARAMS);
    return withQueries(params, restrictLogQueries(theOne(params, 'query'), rules), 'streams');
  }
  if (LOKI_LABEL_PATH.test(path)) {
    // Loki's `query` here is a stream selector: the caller's narrowed by the rules, else the rules';
    // under rules no one matcher set unites, one request per rule, their names or values merged
    acceptOnly(path, params, LOKI_LABEL_PARAMS);
    const given = params.getAll('query');
    if (given.length > 1) throw new BadRequestError('give the parameter query at most once');
    if (given.length === 1) checkStreamSelector(given[0]!, 'query');
    const united = logRuleMatchers(rules);
    if (!united) checkUnionSize(rules);
    const each = united ? [united] : rules;
    const queries = each.map((matchers) => (given.length === 1 ? restrictLogQuery(given[0]!, [matchers], 'query') : renderSelector(matchers)));
    return withQueries(params, queries, 'names');
  }
  if (path === 'loki/api/v1/series') {
    // Loki ORs the match[] selectors: each incoming one intersected with each rule is their union exactly
    acceptOnly(path, params, LOKI_SERIES_PARAMS);
    const incoming = params.getAll('match[]');
    if (incoming.length > MAX_MATCHES) throw new BadRequestError(`give at most ${MAX_MATCHES} match[] selectors`);
    const restricted = without(params, 'match[]');
    if (incoming.length === 0) for (const rule of rules) restricted.append('match[]', renderSelector(rule));
    for (const [index, selector] of incoming.entries()) {
      const what = `match[] ${index + 1}`;
      checkStreamSelector(selector, what);
      for (const rule of rules) restricted.append('match[]', restrictLogQuery(selector, [rule], what));
    }
    return { params: restricted };
  }
  throw new BadRequestError(`label rules apply to this connector, and ${path} cannot be restricted by labels`);
}

function victoriaLogsParams(rules: LabelMatcher[][], path: string, params: URLSearchParams): URLSearchParams {
  acceptOnly(path, params, LOGSQL_PARAMS);
  const restricted = new URLSearchParams(params);
  restricted.set('extra_stream_filters', streamFilterOf(rules));
  return restricted;
}

/** How the answers of a read sent once per rule are merged: log lines (`streams`), or label names or values (`names`). */
export type ProxyMerge = 'streams' | 'names';

/** What a proxied read sends: one request's parameters, or (Loki, rules no one query unites) one request per rule and how their answers merge. */
export type ProxyRead = { params: URLSearchParams } | { union: URLSearchParams[]; merge: ProxyMerge };

/**
 * The parameters a proxied read sends under the restriction, in the connector's language. Under
 * rules only the backend's own read parameters are forwarded (any other is a 400, and so is a
 * caller's `extra_filters` or `extra_stream_filters`), each written anew, so the backend reads
 * exactly what was checked: Prometheus' and Loki's queries restricted, their label and series
 * requests given selectors from the rules (an incoming one intersected with them), VictoriaLogs'
 * reads given the rules' stream filter. On Loki, a log query or a labels request under rules that
 * no one query unites is sent once per rule, and the answers merged.
 */
export function restrictedProxyParams(restriction: ReadRestriction, language: ReadLanguage, path: string, params: URLSearchParams): ProxyRead {
  if (restriction.mode !== 'applied') return { params };
  if (language === 'promql') return { params: prometheusParams(restriction.rules, path, params) };
  if (language === 'logql') return lokiParams(restriction.rules, path, params);
  return { params: victoriaLogsParams(restriction.rules, path, params) };
}
