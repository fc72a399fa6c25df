/**
 * What a backend's answer means, read without I/O: the Prometheus envelope (`{status, data,
 * error}`, Loki's and VictoriaLogs' stats too) and VictoriaLogs' JSON lines, its results in the
 * service's shapes, and what the caller is told when it failed. A query's answer can be megabytes of JSON, so it is decoded on a worker thread
 * (answer-pool.ts) and comes back as the JSON the caller gets; a connectivity test's labels are
 * read here on the event loop.
 */
import { STATUS_CODES } from 'node:http';

interface PrometheusAnswer {
  status?: string;
  data?: unknown;
  error?: string;
}

/** What the worker is given: the backend's answer and how to read it. */
export interface QueryAnswer {
  api: 'prometheus' | 'loki' | 'victorialogs';
  /**
   * VictoriaLogs' log lines (`/select/logsql/query` answers JSON lines, not an envelope): read as
   * streams, newest (`backward`) or oldest (`forward`) first. Without it a VictoriaLogs answer is
   * a stats query's, in Prometheus' envelope.
   */
  lines?: 'backward' | 'forward';
  status: number;
  contentType: string;
  /** The body as it came, in chunks: put together on the worker, not on the event loop. */
  chunks: Uint8Array[];
  /** Keep the first `maxSeries` series of a series result, and say how many there were (the chat tools' cap). */
  maxSeries?: number;
}

/** The result's JSON, or why there is none: the backend's refusal (400) or failure (502). */
export type DecodedAnswer = { json: Uint8Array } | { failure: { status: 400 | 502; message: string } };

type SampleValue = [number, number | null];

export interface MetricsResult {
  resultType: string;
  series: Array<{ labels: Record<string, string>; values: SampleValue[] }>;
}

/** A log stream: its labels and its lines as `[timestamp in nanoseconds (a string: it exceeds 2^53), line]`. */
interface LogStream {
  labels: Record<string, string>;
  entries: Array<[string, string]>;
}

/** Log queries give streams; metric LogQL (`count_over_time(...)`) gives Prometheus' vectors and matrices. */
export type LogsResult = { resultType: 'streams'; streams: LogStream[] } | MetricsResult;

/** A series result cut to the first `maxSeries` (capped by the chat tools). */
export interface CappedSeries {
  resultType: string;
  series: MetricsResult['series'];
  truncated: boolean;
  totalSeries: number;
}

/** The JSON answer of a backend in the Prometheus envelope, or null when it is not one. */
export function parseAnswer(body: Uint8Array): PrometheusAnswer | null {
  try {
    const parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as PrometheusAnswer) : null;
  } catch {
    return null;
  }
}

/** What an error text from a backend may be when it is shown: one line, bounded. */
const MAX_ERROR_CHARS = 500;

function oneBoundedLine(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > MAX_ERROR_CHARS ? `${line.slice(0, MAX_ERROR_CHARS)}…` : line;
}

const mediaType = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

/**
 * The backend's own error, when its answer is one: the `error` (or `message`) of a JSON answer, or
 * a plain-text refusal (how Prometheus, vmauth and Loki word theirs), bounded and on one line. Any
 * other answer (an HTML page, a 200 that is not the API) is not shown: it may be a page of
 * whatever else answered at that address, so the caller learns only its status and content type.
 */
function ownError(status: number, contentType: string, body: Uint8Array): string | null {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return mediaType(contentType) === 'text/plain' && status >= 400 ? oneBoundedLine(text) : null;
  }
  const { error, message } = (parsed && typeof parsed === 'object' ? parsed : {}) as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return oneBoundedLine(error);
  if (typeof message === 'string') return oneBoundedLine(message);
  return null;
}

export interface AnswerFailure {
  message: string;
  details: { status: number; error: string } | { status: number; contentType: string };
}

/** Why an answer is not a result, in words for the caller: the backend's own error, else its status and content type. */
export function answerFailure(status: number, contentType: string, body: Uint8Array, api: string): AnswerFailure {
  const error = ownError(status, contentType, body);
  if (error !== null) return { message: `backend answered ${status}${error ? `: ${error}` : ''}`, details: { status, error } };
  const type = mediaType(contentType) || 'no content type';
  const reason = STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : '';
  return { message: `backend answered ${status}${reason} (${type}): not a ${api}`, details: { status, contentType: type } };
}

/** The API's name in what the caller is told. */
export const API_NAMES = { prometheus: 'Prometheus API', loki: 'Loki API', victorialogs: 'VictoriaLogs API' } as const;

/** A Prometheus sample `[unixSeconds, "value"]` as numbers; NaN and ±Inf (not JSON) are null. */
function sample(raw: unknown): SampleValue {
  const [time, value] = Array.isArray(raw) ? raw : [];
  const number = Number(value);
  return [Number(time), Number.isFinite(number) ? number : null];
}

/** Vector, matrix, scalar and string results as one shape: series with labels and [time, value] pairs (Loki's metric queries too). */
function normaliseSeries(data: { resultType?: string; result?: unknown }): MetricsResult {
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

/** A query that was not answered: the backend's refusal (a bad query, 4xx) is the caller's 400, anything else a 502. */
function refusal(answer: QueryAnswer, body: Uint8Array): DecodedAnswer {
  const { message } = answerFailure(answer.status, answer.contentType, body, API_NAMES[answer.api]);
  return { failure: { status: answer.status >= 400 && answer.status < 500 ? 400 : 502, message } };
}

/** VictoriaLogs' fields that are not labels: the line, its time and its stream (whose fields are fields of the line too). */
const VICTORIA_LOGS_OWN_FIELDS = new Set(['_msg', '_time', '_stream', '_stream_id']);

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** An RFC 3339 time (VictoriaLogs' `_time`, up to nanoseconds) in nanoseconds since the epoch; null when it is not one. */
export function rfc3339Nanos(time: unknown): bigint | null {
  const match = typeof time === 'string' ? RFC3339.exec(time) : null;
  if (!match) return null;
  const ms = Date.parse(`${match[1]}${match[3]}`);
  if (!Number.isFinite(ms)) return null;
  return BigInt(ms) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'));
}

/**
 * VictoriaLogs' JSON lines as streams: a line's labels are its fields (its stream's and the
 * others) but the line, its time and its stream, so lines with the same fields form one stream;
 * lines newest or oldest first, and streams in the order of their first line. A line without a
 * time is at 0. Null when the body is not JSON lines.
 */
function victoriaLogsStreams(body: Buffer, order: 'backward' | 'forward'): LogsResult | null {
  const rows: Array<{ time: bigint; line: string; key: string; labels: Record<string, string> }> = [];
  for (const text of body.toString('utf8').split('\n')) {
    if (!text.trim()) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return null;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    const fields = parsed as Record<string, unknown>;
    const labels: Record<string, string> = {};
    for (const name of Object.keys(fields).sort()) if (!VICTORIA_LOGS_OWN_FIELDS.has(name)) labels[name] = String(fields[name]);
    rows.push({ time: rfc3339Nanos(fields._time) ?? 0n, line: String(fields._msg ?? ''), key: JSON.stringify(labels), labels });
  }
  rows.sort((a, b) => (a.time === b.time ? 0 : a.time < b.time === (order === 'forward') ? -1 : 1));
  const streams = new Map<string, LogStream>();
  for (const row of rows) {
    let stream = streams.get(row.key);
    if (!stream) streams.set(row.key, (stream = { labels: row.labels, entries: [] }));
    stream.entries.push([String(row.time), row.line]);
  }
  return { resultType: 'streams', streams: [...streams.values()] };
}

/**
 * The result of a query answer: Prometheus' series; Loki's streams, or series for a metric query
 * (Loki 3 answers log lines to range queries only, and refuses them to an instant one).
 */
function resultOf(answer: QueryAnswer): LogsResult | DecodedAnswer {
  const body = Buffer.concat(answer.chunks);
  if (answer.api === 'victorialogs' && answer.lines) {
    const streams = answer.status === 200 ? victoriaLogsStreams(body, answer.lines) : null;
    return streams ?? refusal(answer, body);
  }
  const parsed = parseAnswer(body);
  const data = parsed?.data;
  if (answer.status !== 200 || parsed?.status !== 'success' || !data || typeof data !== 'object') return refusal(answer, body);
  const { resultType } = data as { resultType?: string; result?: unknown };
  // Prometheus' series, and VictoriaLogs' stats queries (`| stats … by (…)`) in its shapes
  if (answer.api !== 'loki') return normaliseSeries(data);
  if (resultType === 'streams') return normaliseStreams((data as { result?: unknown }).result);
  if (resultType === 'vector' || resultType === 'matrix' || resultType === 'scalar') return normaliseSeries(data);
  return { failure: { status: 502, message: `backend answered a result of unknown type ${JSON.stringify(resultType ?? null)}` } };
}

/** A query's answer as the JSON of its result (capped when asked), or the failure the caller is told. */
export function decodeQueryAnswer(answer: QueryAnswer): DecodedAnswer {
  const result = resultOf(answer);
  if ('failure' in result || 'json' in result) return result;
  const shown: LogsResult | CappedSeries =
    answer.maxSeries === undefined || !('series' in result)
      ? result
      : {
          resultType: result.resultType,
          series: result.series.slice(0, answer.maxSeries),
          truncated: result.series.length > answer.maxSeries,
          totalSeries: result.series.length,
        };
  // memory of its own (a small Buffer would share Node's pool), so that it can move to another thread
  return { json: new TextEncoder().encode(JSON.stringify(shown)) };
}
