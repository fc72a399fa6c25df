/**
 * The Prometheus HTTP API behind a `tsmetrics` connector: the connectivity test
 * (`GET /api/v1/labels`), instant and range queries with normalised results, and the read paths
 * the proxy may forward. Prometheus-compatible backends (VictoriaMetrics, Mimir, Thanos) answer
 * the same API.
 */
import { BadGatewayError, BadRequestError, ServiceError } from '../../errors.ts';
import { decodeOffThread } from './answer-pool.ts';
import { answerFailure, API_NAMES, parseAnswer, type QueryAnswer } from './answers.ts';
import type { Backend, BackendCall } from './request.ts';

export interface ConnectivityResult {
  status: 'OK' | 'ERROR';
  message: string;
  details: Record<string, unknown>;
}

/**
 * A connectivity test on a labels path answering in the Prometheus envelope (Loki's does too):
 * label names on success; otherwise the backend's status and its own (bounded) error, or when
 * what answered is not the API, its status and content type; never its headers.
 */
export async function testLabelsPath(backend: Backend, path: string, api: string): Promise<ConnectivityResult> {
  let response;
  try {
    response = await backend.send({ method: 'GET', path });
  } catch (err) {
    if (err instanceof ServiceError) return { status: 'ERROR', message: err.message, details: {} };
    throw err;
  }
  const answer = parseAnswer(response.body);
  if (response.status === 200 && answer?.status === 'success') {
    // Loki leaves `data` out when there is no label yet.
    const labels = answer.data ?? [];
    if (Array.isArray(labels)) return { status: 'OK', message: `Successfully queried the ${api}: ${labels.length} label names`, details: { labels } };
  }
  const { message, details } = answerFailure(response.status, response.contentType, response.body, api);
  return { status: 'ERROR', message, details };
}

export const testPrometheus = (backend: Backend) => testLabelsPath(backend, 'api/v1/labels', API_NAMES.prometheus);

export interface MetricsQuery {
  query: string;
  type: 'instant' | 'range';
  time?: number;
  start?: number;
  end?: number;
  step?: number;
}

/** How a query's result is shaped: `maxSeries` keeps the first series and counts them all (the chat tools' cap). */
export interface ResultShape {
  maxSeries?: number;
}

/**
 * The parameters of an instant or range query, times in unix seconds (Loki reads ten digits or
 * fewer as seconds too). Prometheus needs a range's step; Loki chooses one when it is left out.
 */
export function queryParams(query: MetricsQuery, { stepRequired }: { stepRequired: boolean }): URLSearchParams {
  const params = new URLSearchParams({ query: query.query });
  if (query.type === 'range') {
    if (query.start === undefined || query.end === undefined || (stepRequired && query.step === undefined))
      throw new BadRequestError(stepRequired ? 'a range query needs start, end and step' : 'a range query needs start and end');
    params.set('start', String(query.start));
    params.set('end', String(query.end));
    if (query.step !== undefined) params.set('step', String(query.step));
  } else if (query.time !== undefined) {
    params.set('time', String(query.time));
  }
  return params;
}

/**
 * Sends a query and decodes its answer off the event loop as it comes (answer-pool.ts): the JSON of the
 * normalised result; the backend's refusal (a bad query) is a 400 with its message, its failure a 502.
 */
export async function runQuery(backend: Backend, api: QueryAnswer['api'], call: BackendCall, shape: ResultShape & Pick<QueryAnswer, 'lines'>): Promise<Buffer> {
  const { status, contentType, body } = await backend.stream(call);
  const decoded = await decodeOffThread({ api, status, contentType, ...shape }, body);
  if ('failure' in decoded) throw decoded.failure.status === 400 ? new BadRequestError(decoded.failure.message) : new BadGatewayError(decoded.failure.message);
  return Buffer.from(decoded.json.buffer, decoded.json.byteOffset, decoded.json.byteLength);
}

/** Runs an instant or range query: the JSON of `{resultType, series}` (MetricsResult, or CappedSeries with `maxSeries`). */
export async function queryPrometheus(backend: Backend, query: MetricsQuery, shape: ResultShape = {}): Promise<Buffer> {
  const params = queryParams(query, { stepRequired: true });
  return runQuery(backend, 'prometheus', { method: 'POST', path: query.type === 'range' ? 'api/v1/query_range' : 'api/v1/query', params }, shape);
}

/** The read paths the proxy forwards; everything else (admin, write, remote-write paths) is refused. */
const READ_PATHS = [
  /^api\/v1\/query$/,
  /^api\/v1\/query_range$/,
  /^api\/v1\/labels$/,
  /^api\/v1\/label\/[a-zA-Z_][a-zA-Z0-9_]*\/values$/,
  /^api\/v1\/series$/,
  /^api\/v1\/metadata$/,
];

export const isPrometheusReadPath = (path: string) => READ_PATHS.some((pattern) => pattern.test(path));
