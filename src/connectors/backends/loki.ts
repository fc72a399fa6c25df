/**
 * The Grafana Loki HTTP API behind a `logstore` connector. As Grafana's Loki data source, the
 * connector URL is Loki's base URL and the API lies under its `loki/` prefix: the connectivity
 * test (`GET loki/api/v1/labels`), instant and range LogQL queries with normalised results, and
 * the read paths the proxy may forward. Loki answers in Prometheus' envelope, and its metric
 * queries in Prometheus' result shapes, so those parts are Prometheus'.
 */
import { BadRequestError } from '../../errors.ts';
import { API_NAMES } from './answers.ts';
import { queryParams, runQuery, testLabelsPath, type MetricsQuery, type ResultShape } from './prometheus.ts';
import type { Backend } from './request.ts';

export const testLoki = (backend: Backend) => testLabelsPath(backend, 'loki/api/v1/labels', API_NAMES.loki);

export const DEFAULT_LOG_LIMIT = 100;
export const MAX_LOG_LIMIT = 5000;

export interface LogsQuery extends MetricsQuery {
  /** The most log lines returned (Loki's `limit`): DEFAULT_LOG_LIMIT unless given, at most MAX_LOG_LIMIT. */
  limit?: number;
  /** Newest lines first (`backward`, the default) or oldest first. */
  direction?: 'backward' | 'forward';
}

/** The limit of a log query, DEFAULT_LOG_LIMIT unless given; checked here too, as the chat tool `logs_query` runs without the route's body schema. */
export function checkedLogLimit(given: number | undefined): number {
  const limit = given ?? DEFAULT_LOG_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOG_LIMIT) throw new BadRequestError(`limit must be an integer from 1 to ${MAX_LOG_LIMIT}`);
  return limit;
}

/**
 * Runs an instant or range LogQL query: the JSON of its streams, or of its series for a metric
 * query (LogsResult; CappedSeries with `maxSeries`). Loki's refusal (a bad query, or log lines
 * asked of an instant query: Loki 3 returns lines to range queries only) is a 400 with its
 * message, its failure a 502.
 */
export async function queryLoki(backend: Backend, query: LogsQuery, shape: ResultShape = {}): Promise<Buffer> {
  const limit = checkedLogLimit(query.limit);
  const params = queryParams(query, { stepRequired: false });
  params.set('limit', String(limit));
  params.set('direction', query.direction ?? 'backward');
  return runQuery(backend, 'loki', { method: 'POST', path: query.type === 'range' ? 'loki/api/v1/query_range' : 'loki/api/v1/query', params }, shape);
}

/** The read paths the proxy forwards; push, tail, delete, rules and the rest are refused. */
const READ_PATHS = [
  /^loki\/api\/v1\/query$/,
  /^loki\/api\/v1\/query_range$/,
  /^loki\/api\/v1\/labels$/,
  /^loki\/api\/v1\/label\/[a-zA-Z_][a-zA-Z0-9_]*\/values$/,
  /^loki\/api\/v1\/series$/,
];

export const isLokiReadPath = (path: string) => READ_PATHS.some((pattern) => pattern.test(path));
