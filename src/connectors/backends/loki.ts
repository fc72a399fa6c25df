/**
 * The Grafana Loki HTTP API behind a `logstore` connector. As Grafana's Loki data source, the
 * connector URL is Loki's base URL and the API lies under its `loki/` prefix: the connectivity
 * test (`GET loki/api/v1/labels`), instant and range LogQL queries with normalised results, and
 * the read paths the proxy may forward. Loki answers in Prometheus' envelope, and its metric
 * queries in Prometheus' result shapes, so those parts are Prometheus'.
 */
import { BadGatewayError, BadRequestError } from '../../errors.ts';
import { mergeOffThread } from './answer-pool.ts';
import { API_NAMES } from './answers.ts';
import { queryParams, runQuery, testLabelsPath, type MetricsQuery, type ResultShape } from './prometheus.ts';
import type { Backend, BackendCall } from './request.ts';
import type { MergeJob } from './loki-union.ts';

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

async function merged(job: MergeJob): Promise<Buffer> {
  const decoded = await mergeOffThread(job);
  if ('failure' in decoded) throw new BadGatewayError(decoded.failure.message);
  return Buffer.from(decoded.json.buffer, decoded.json.byteOffset, decoded.json.byteLength);
}

/**
 * Runs a log query as `queries`, one per label rule (label-rewrite-logql.ts), at once: the JSON of
 * the streams of their union (loki-union.ts). The first refusal or failure is the answer's.
 */
export async function queryLokiUnion(backend: Backend, query: LogsQuery, queries: readonly string[], shape: ResultShape = {}): Promise<Buffer> {
  const limit = checkedLogLimit(query.limit);
  const parts = await Promise.all(queries.map((one) => queryLoki(backend, { ...query, query: one }, shape)));
  return merged({ kind: 'result', direction: query.direction ?? 'backward', limit, parts });
}

/** What the proxy answers: the backend's status, content type and body. */
export interface ProxiedAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/**
 * A proxied read sent once per label rule, at once: their answers merged (`streams`: a log
 * query's lines; `names`: label names or values), or the first that is not a 200, as it came.
 */
export async function proxyLokiUnion(
  backend: Backend,
  call: Omit<BackendCall, 'params'>,
  union: readonly URLSearchParams[],
  merge: 'streams' | 'names',
): Promise<ProxiedAnswer> {
  const answers = await Promise.all(union.map((params) => backend.send({ ...call, params })));
  const refused = answers.find((answer) => answer.status !== 200);
  if (refused) return refused;
  const first = union[0]!;
  const given = Number(first.get('limit') ?? DEFAULT_LOG_LIMIT);
  const job: MergeJob = {
    kind: merge === 'names' ? 'names' : 'envelope',
    direction: first.get('direction') === 'forward' ? 'forward' : 'backward',
    // Loki refuses a limit it cannot read; one it reads as a number is what each answer was cut to
    limit: Number.isFinite(given) && given > 0 ? Math.floor(given) : DEFAULT_LOG_LIMIT,
    parts: answers.map((answer) => answer.body),
  };
  return { status: 200, contentType: 'application/json', body: await merged(job) };
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
