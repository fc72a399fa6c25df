/**
 * Reads a dense query of each query grammar a few times, once a process, so that the parser's
 * code is compiled before the first query a caller sends: uncompiled, it reads a 20 KB query about
 * eight times slower (134 against 16 ms), which would spend the parse budget (PARSE_BUDGET_MS) on
 * a query the service reads well within it. About 250 ms, when the connectors' routes are
 * registered.
 */
import { LOGQL } from './label-rewrite-logql.ts';
import { PROMQL, readQuery } from './label-rewrite.ts';

const PROMQL_PART =
  'sum by (namespace, pod) (rate(http_requests_total{job="api", code=~"5.."}[5m])) / on (namespace) group_left max_over_time(up{a!="b"}[30m:1m] offset 1h)';
const LOGQL_PART = 'sum by (namespace) (count_over_time({app="api", cluster=~"eu-.*"} |= "error" | json | level=~"error|fatal" | unwrap x [5m]))';
/** Parts a query, within the grammars' limit of chained operators. */
const PARTS = 40;
const ROUNDS = 10;
/** No budget for the warm-up's own parses: it is what makes the budget hold. */
const UNBOUNDED_MS = Number.POSITIVE_INFINITY;

let warmed = false;

export function warmQueryGrammars(): void {
  if (warmed) return;
  warmed = true;
  const promql = Array(PARTS).fill(PROMQL_PART).join(' or ');
  const logql = Array(PARTS).fill(LOGQL_PART).join(' or ');
  for (let round = 0; round < ROUNDS; round++) {
    readQuery(PROMQL, promql, 'the warm-up query', UNBOUNDED_MS);
    readQuery(LOGQL, logql, 'the warm-up query', UNBOUNDED_MS);
  }
}
