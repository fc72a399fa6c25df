/**
 * The Prometheus HTTP API behind a `tsmetrics` connector: the connectivity test
 * (`GET /api/v1/labels`), instant and range queries with normalised results, and the read paths
 * the proxy may forward. Prometheus-compatible backends (VictoriaMetrics, Mimir, Thanos) answer
 * the same API.
 */
import { BadGatewayError, BadRequestError, ServiceError } from '../../errors.ts';
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

function parseAnswer(body: Buffer): PrometheusAnswer | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as PrometheusAnswer) : null;
  } catch {
    return null;
  }
}

/** The connectivity test: label names on success; the backend's status and its own (bounded) error otherwise, never its headers. */
export async function testPrometheus(backend: Backend): Promise<ConnectivityResult> {
  let response;
  try {
    response = await backend.send({ method: 'GET', path: 'api/v1/labels' });
  } catch (err) {
    if (err instanceof ServiceError) return { status: 'ERROR', message: err.message, details: {} };
    throw err;
  }
  const answer = parseAnswer(response.body);
  if (response.status === 200 && answer?.status === 'success' && Array.isArray(answer.data)) {
    return { status: 'OK', message: `Successfully queried the Prometheus API: ${answer.data.length} label names`, details: { labels: answer.data } };
  }
  const error = backend.errorText(response);
  return {
    status: 'ERROR',
    message: `backend answered ${response.status}${error ? `: ${error}` : ''}`,
    details: { status: response.status, error },
  };
}

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

/** Vector, matrix, scalar and string results as one shape: series with labels and [time, value] pairs. */
function normalise(data: { resultType?: string; result?: unknown }): MetricsResult {
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

/** Runs an instant or range query; the backend's refusal (a bad query) is a 400 with its message. */
export async function queryPrometheus(backend: Backend, query: MetricsQuery): Promise<MetricsResult> {
  const params = new URLSearchParams({ query: query.query });
  if (query.type === 'range') {
    if (query.start === undefined || query.end === undefined || query.step === undefined) throw new BadRequestError('a range query needs start, end and step');
    params.set('start', String(query.start));
    params.set('end', String(query.end));
    params.set('step', String(query.step));
  } else if (query.time !== undefined) {
    params.set('time', String(query.time));
  }
  const response = await backend.send({ method: 'POST', path: query.type === 'range' ? 'api/v1/query_range' : 'api/v1/query', params });
  const answer = parseAnswer(response.body);
  if (response.status === 200 && answer?.status === 'success' && answer.data && typeof answer.data === 'object') {
    return normalise(answer.data as { resultType?: string; result?: unknown });
  }
  const error = backend.errorText(response);
  const message = `backend answered ${response.status}${error ? `: ${error}` : ''}`;
  throw response.status >= 400 && response.status < 500 ? new BadRequestError(message) : new BadGatewayError(message);
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
