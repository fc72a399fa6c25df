/**
 * The Prometheus HTTP API behind a `tsmetrics` connector: the connectivity test
 * (`GET /api/v1/labels`), instant and range queries with normalised results, and the read paths
 * the proxy may forward. Prometheus-compatible backends (VictoriaMetrics, Mimir, Thanos) answer
 * the same API.
 */
import { BadGatewayError, BadRequestError, ServiceError } from '../../errors.ts';
import type { OutboundResponse } from '../../outbound/client.ts';
import type { Backend } from './request.ts';

export interface ConnectivityResult {
  status: 'OK' | 'ERROR';
  message: string;
  details: Record<string, unknown>;
}

interface PrometheusAnswer {
  status?: string;
  data?: unknown;
  error?: string;
}

/** The JSON answer of a backend in the Prometheus envelope (`{status, data, error}`), or null when it is not one. */
export function parseAnswer(body: Buffer): PrometheusAnswer | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as PrometheusAnswer) : null;
  } catch {
    return null;
  }
}

/** How a backend's failed answer is shown: its status and its own (bounded) error. */
const answeredWith = (status: number, error: string) => `backend answered ${status}${error ? `: ${error}` : ''}`;

/**
 * A connectivity test on a labels path answering in the Prometheus envelope (Loki's does too):
 * label names on success; the backend's status and its own (bounded) error otherwise, never its headers.
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
  const error = backend.errorText(response);
  return { status: 'ERROR', message: answeredWith(response.status, error), details: { status: response.status, error } };
}

export const testPrometheus = (backend: Backend) => testLabelsPath(backend, 'api/v1/labels', 'Prometheus API');

export interface MetricsQuery {
  query: string;
  type: 'instant' | 'range';
  time?: number;
  start?: number;
  end?: number;
  step?: number;
}

type SampleValue = [number, number | null];

export interface MetricsResult {
  resultType: string;
  series: Array<{ labels: Record<string, string>; values: SampleValue[] }>;
}

/** A Prometheus sample `[unixSeconds, "value"]` as numbers; NaN and ±Inf (not JSON) are null. */
function sample(raw: unknown): SampleValue {
  const [time, value] = Array.isArray(raw) ? raw : [];
  const number = Number(value);
  return [Number(time), Number.isFinite(number) ? number : null];
}

/** Vector, matrix, scalar and string results as one shape: series with labels and [time, value] pairs (Loki's metric queries too). */
export function normaliseSeries(data: { resultType?: string; result?: unknown }): MetricsResult {
  const resultType = String(data.resultType ?? '');
  const result = data.result;
  if (resultType === 'vector' || resultType === 'matrix') {
    const series = (Array.isArray(result) ? result : []).map((entry: { metric?: Record<string, string>; value?: unknown; values?: unknown[] }) => ({
      labels: entry.metric ?? {},
      values: resultType === 'vector' ? [sample(entry.value)] : (entry.values ?? []).map(sample),
    }));
    return { resultType, series };
  }
  return { resultType, series: [{ labels: {}, values: [sample(result)] }] };
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

/** Runs an instant or range query; the backend's refusal (a bad query) is a 400 with its message. */
export async function queryPrometheus(backend: Backend, query: MetricsQuery): Promise<MetricsResult> {
  const params = queryParams(query, { stepRequired: true });
  const response = await backend.send({ method: 'POST', path: query.type === 'range' ? 'api/v1/query_range' : 'api/v1/query', params });
  const answer = parseAnswer(response.body);
  if (response.status === 200 && answer?.status === 'success' && answer.data && typeof answer.data === 'object') {
    return normaliseSeries(answer.data as { resultType?: string; result?: unknown });
  }
  throw queryRefusal(backend, response);
}

/** A query the backend did not answer: its refusal (a bad query, 4xx) is the caller's 400, anything else a 502. */
export function queryRefusal(backend: Backend, response: OutboundResponse): ServiceError {
  const message = answeredWith(response.status, backend.errorText(response));
  return response.status >= 400 && response.status < 500 ? new BadRequestError(message) : new BadGatewayError(message);
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
