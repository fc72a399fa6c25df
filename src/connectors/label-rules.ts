/**
 * Label rules at read time: the policy (authz/label_rules) says which selectors apply to the
 * caller on a connector, and every read of a metrics connector goes through here: a query is
 * restricted (label-rewrite.ts), a label or series request gets its `match[]` from the rules, and
 * a path that cannot be restricted is refused. Once a connector has a rule, a caller no rule names
 * is refused (403), except org and connector Admins. The answer says which applied in the header
 * `X-Gatehouse-Label-Rules: none | bypass | applied`.
 */
import type { Context } from 'koa';
import type { Subject } from '../authz/types.ts';
import { BadRequestError, ForbiddenError } from '../errors.ts';
import type { Services } from '../services.ts';
import { matchersOfRules, restrictMatches, restrictQuery, type LabelMatcher } from './label-rewrite.ts';
import type { ConnectorRow } from './store.ts';

export const LABEL_RULES_HEADER = 'X-Gatehouse-Label-Rules';

/** What a read may see: everything (`none`, `bypass`), or what one of `rules` matches (`applied`). */
export interface ReadRestriction {
  mode: 'none' | 'bypass' | 'applied';
  rules: LabelMatcher[][];
}

export const NO_RESTRICTION: ReadRestriction = { mode: 'none', rules: [] };

/**
 * The restriction on `subject`'s reads of the connector, from the policy; 403 when the connector
 * has rules and none names the subject, its teams or its org role. Call it after authorize().
 */
export async function readRestriction(services: Services, subject: Subject, orgId: string, connector: ConnectorRow): Promise<ReadRestriction> {
  const answer = await services.engine.labelRules({ subject, org_id: orgId, resource: { kind: 'connectors', uid: connector.uid } });
  if (answer.mode === 'denied') throw new ForbiddenError('permission denied: this connector has label rules, and none of them applies to you');
  if (answer.mode !== 'applied') return { mode: answer.mode, rules: [] };
  // rules are saved on metrics connectors only: any other reader has no way to apply them
  if (connector.type !== 'tsmetrics') throw new BadRequestError('label rules are supported on metrics connectors');
  return { mode: 'applied', rules: matchersOfRules(answer.selectors) };
}

/** Says in the response which restriction applied. */
export function announceRestriction(ctx: Context, restriction: ReadRestriction): void {
  ctx.set(LABEL_RULES_HEADER, restriction.mode);
}

/** A PromQL query as the restriction lets it read. */
export const restrictedQuery = (restriction: ReadRestriction, query: string, what?: string) =>
  restriction.mode === 'applied' ? restrictQuery(query, restriction.rules, what) : query;

const QUERY_PATHS = new Set(['api/v1/query', 'api/v1/query_range']);
const MATCH_PATH = /^api\/v1\/(labels|series|label\/[^/]+\/values)$/;
/** The parameters each kind of path takes under rules: Prometheus' own; anything else could mean something to another backend. */
const QUERY_PARAMS = new Set(['query', 'time', 'start', 'end', 'step', 'timeout', 'limit', 'stats']);
const MATCH_PARAMS = new Set(['match[]', 'start', 'end', 'limit']);

/**
 * The parameters a proxied read sends under the restriction: the query restricted, `match[]`
 * made from the rules (an incoming one intersected with them). Under rules, only the query, label
 * and series paths are forwarded, with Prometheus' parameters only; everything is written anew,
 * so the backend reads exactly what was checked.
 */
export function restrictedProxyParams(restriction: ReadRestriction, path: string, params: URLSearchParams): URLSearchParams {
  if (restriction.mode !== 'applied') return params;
  const isQuery = QUERY_PATHS.has(path);
  if (!isQuery && !MATCH_PATH.test(path)) throw new BadRequestError(`label rules apply to this connector, and ${path} cannot be restricted by labels`);
  const accepted = isQuery ? QUERY_PARAMS : MATCH_PARAMS;
  for (const name of new Set(params.keys())) {
    if (!accepted.has(name)) throw new BadRequestError(`label rules apply to this connector, and ${path} takes no parameter ${name} then`);
  }
  const restricted = new URLSearchParams();
  for (const [name, value] of params) if (name !== 'query' && name !== 'match[]') restricted.append(name, value);
  if (isQuery) {
    const queries = params.getAll('query');
    if (queries.length !== 1) throw new BadRequestError('give the parameter query exactly once');
    restricted.set('query', restrictQuery(queries[0]!, restriction.rules));
  } else {
    for (const selector of restrictMatches(params.getAll('match[]'), restriction.rules)) restricted.append('match[]', selector);
  }
  return restricted;
}
