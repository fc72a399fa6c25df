/**
 * The Grafana Loki HTTP API behind a `logstore` connector. As Grafana's Loki data source, the
 * connector URL is Loki's base URL and the API lies under its `loki/` prefix: the connectivity
 * test (`GET loki/api/v1/labels`), instant and range LogQL queries with normalised results, and
 * the read paths the proxy may forward. Loki answers in Prometheus' envelope, and its metric
 * queries in Prometheus' result shapes, so those parts are Prometheus'.
 */
import { BadGatewayError, BadRequestError } from '../../errors.ts';
import { normaliseSeries, parseAnswer, queryParams, queryRefusal, testLabelsPath, type MetricsQuery, type MetricsResult } from './prometheus.ts';
import type { Backend } from './request.ts';

export const testLoki = (backend: Backend) => testLabelsPath(backend, 'loki/api/v1/labels', 'Loki API');

export const DEFAULT_LOG_LIMIT = 100;
export const MAX_LOG_LIMIT = 5000;

export interface LogsQuery extends MetricsQuery {
  /** The most log lines returned (Loki's `limit`): DEFAULT_LOG_LIMIT unless given, at most MAX_LOG_LIMIT. */
  limit?: number;
  /** Newest lines first (`backward`, the default) or oldest first. */
  direction?: 'backward' | 'forward';
}

/** A log stream: its labels and its lines as `[timestamp in nanoseconds (a string: it exceeds 2^53), line]`. */
export interface LogStream {
  labels: Record<string, string>;
  entries: Array<[string, string]>;
}

/** Log queries give streams; metric LogQL (`count_over_time(...)`) gives Prometheus' vectors and matrices. */
export type LogsResult = { resultType: 'streams'; streams: LogStream[] } | MetricsResult;

interface LokiStream {
  stream?: Record<string, string>;
  values?: unknown[];
}

/** Loki's streams without what the caller did not ask for (structured metadata, a third element of an entry). */
function normaliseStreams(result: unknown): LogsResult {
  const streams = (Array.isArray(result) ? (result as LokiStream[]) : []).map(({ stream, values }) => ({
    labels: stream ?? {},
    entries: (values ?? []).map((value): [string, string] => {
      const [timestamp, line] = Array.isArray(value) ? value : [];
      return [String(timestamp), String(line)];
    }),
  }));
  return { resultType: 'streams', streams };
}

/**
 * Runs an instant or range LogQL query; Loki's refusal (a bad query, or log lines asked of an
 * instant query: Loki 3 returns lines to range queries only) is a 400 with its message, its failure a 502.
 */
export async function queryLoki(backend: Backend, query: LogsQuery): Promise<LogsResult> {
  // Checked here too: the chat tool `logs_query` calls this without the route's body schema.
  const limit = query.limit ?? DEFAULT_LOG_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LOG_LIMIT) throw new BadRequestError(`limit must be an integer from 1 to ${MAX_LOG_LIMIT}`);
  const params = queryParams(query, { stepRequired: false });
  params.set('limit', String(limit));
  params.set('direction', query.direction ?? 'backward');
  const response = await backend.send({ method: 'POST', path: query.type === 'range' ? 'loki/api/v1/query_range' : 'loki/api/v1/query', params });
  const answer = parseAnswer(response.body);
  if (response.status !== 200 || answer?.status !== 'success') throw queryRefusal(backend, response);
  const data = (answer.data ?? {}) as { resultType?: string; result?: unknown };
  if (data.resultType === 'streams') return normaliseStreams(data.result);
  if (data.resultType === 'vector' || data.resultType === 'matrix' || data.resultType === 'scalar') return normaliseSeries(data);
  throw new BadGatewayError(`backend answered a result of unknown type ${JSON.stringify(data.resultType ?? null)}`);
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
