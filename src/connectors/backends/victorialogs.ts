/**
 * The VictoriaLogs HTTP API behind a `logstore` connector whose `jsonData.backend` is
 * `victorialogs`: the connector URL is VictoriaLogs' base URL and its read API lies under
 * `select/logsql/`. The connectivity test (the stream field names of the last six hours), LogsQL
 * queries for log lines (`query`, newest first, bounded by `limit`) and stats queries
 * (`| stats … by (…)`, answered in Prometheus' envelope and shaped as metric LogQL is), and the read
 * paths the proxy may forward. Tenants are the `AccountID` and `ProjectID` headers, set as the
 * connector's custom headers (sealed).
 */
import { BadRequestError, ServiceError } from '../../errors.ts';
import { answerFailure, API_NAMES } from './answers.ts';
import { checkedLogLimit, type LogsQuery } from './loki.ts';
import { runQuery, type ConnectivityResult, type ResultShape } from './prometheus.ts';
import type { Backend } from './request.ts';

/** How far back the connectivity test looks for stream fields (as Loki's labels API does by default). */
const TEST_WINDOW_SECONDS = 6 * 3600;

/**
 * The connectivity test: `GET select/logsql/stream_field_names?query=*` over the last six hours;
 * the names on success, otherwise the backend's status and its own (bounded) error, or when what
 * answered is not the API, its status and content type.
 */
export async function testVictoriaLogs(backend: Backend, now = Date.now()): Promise<ConnectivityResult> {
  const params = new URLSearchParams({ query: '*', start: String(Math.floor(now / 1000) - TEST_WINDOW_SECONDS) });
  let response;
  try {
    response = await backend.send({ method: 'GET', path: 'select/logsql/stream_field_names', params });
  } catch (err) {
    if (err instanceof ServiceError) return { status: 'ERROR', message: err.message, details: {} };
    throw err;
  }
  if (response.status === 200) {
    const names = streamFieldNames(response.body);
    if (names)
      return { status: 'OK', message: `Successfully queried the ${API_NAMES.victorialogs}: ${names.length} stream field names`, details: { labels: names } };
  }
  const { message, details } = answerFailure(response.status, response.contentType, response.body, API_NAMES.victorialogs);
  return { status: 'ERROR', message, details };
}

/** `{"values":[{"value":"app","hits":5},…]}` as the names, sorted; null when it is not that. */
function streamFieldNames(body: Uint8Array): string[] | null {
  try {
    const { values } = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as { values?: unknown };
    if (!Array.isArray(values)) return null;
    const names = values.map((entry: { value?: unknown }) => entry?.value);
    return names.every((name): name is string => typeof name === 'string') ? names.sort() : null;
  } catch {
    return null;
  }
}

/** The stats functions LogsQL lets a pipe start with when it leaves out the word `stats` (`* | count()`). */
const STATS_FUNCTIONS =
  /^(?:by\s*\(|(?:avg|count|count_empty|count_uniq|count_uniq_hash|histogram|json_values|max|median|min|quantile|rate|rate_sum|row_any|row_max|row_min|sum|sum_len|uniq_values|values)\s*\()/i;

/**
 * Whether a LogsQL query has a `stats` pipe, and so answers series rather than lines: a pipe (a
 * `|` outside quotes, parentheses and `#` comments) whose text starts with `stats`, or with a stats
 * function, as LogsQL allows.
 */
export function isStatsQuery(query: string): boolean {
  const pipes: string[] = [];
  let depth = 0;
  let current: string | null = null;
  for (let i = 0; i < query.length; i++) {
    const char = query[i]!;
    if (char === '"' || char === "'" || char === '`') {
      // a quoted phrase: to its closing quote (backslash escapes in all but backquotes)
      let end = i + 1;
      while (end < query.length && query[end] !== char) end += char !== '`' && query[end] === '\\' ? 2 : 1;
      if (current !== null) current += ' ';
      i = end;
      continue;
    }
    if (char === '#') {
      const end = query.indexOf('\n', i);
      i = end < 0 ? query.length : end;
      continue;
    }
    if (char === '(') depth++;
    else if (char === ')') depth = Math.max(0, depth - 1);
    if (char === '|' && depth === 0) {
      if (current !== null) pipes.push(current);
      current = '';
      continue;
    }
    if (current !== null) current += char;
  }
  if (current !== null) pipes.push(current);
  return pipes.some((pipe) => {
    const text = pipe.trim();
    return /^stats(?![\w.])/i.test(text) || STATS_FUNCTIONS.test(text);
  });
}

/**
 * Runs a LogsQL query. Log lines (`select/logsql/query`): a range query reads `start` to `end`, an
 * instant one the lines up to `time` (else now); at most `limit`, the newest unless `direction` is
 * `forward` (then a `sort by (_time)` pipe keeps the oldest); answered as streams (LogsResult). A
 * stats query (`select/logsql/stats_query` at `time`, or `stats_query_range` from `start` to `end`
 * every `step` seconds) answers series (MetricsResult; CappedSeries with `maxSeries`). The
 * backend's refusal (a bad query) is a 400 with its message, its failure a 502. `streamFilter`
 * (label rules) is sent as `extra_stream_filters`, which VictoriaLogs ANDs with the query and
 * every subquery in it.
 */
export async function queryVictoriaLogs(backend: Backend, query: LogsQuery, shape: ResultShape = {}, streamFilter?: string): Promise<Buffer> {
  const limit = checkedLogLimit(query.limit);
  const range = query.type === 'range';
  if (range && (query.start === undefined || query.end === undefined)) throw new BadRequestError('a range query needs start and end');
  const params = new URLSearchParams({ query: query.query });
  if (streamFilter !== undefined) params.set('extra_stream_filters', streamFilter);
  if (isStatsQuery(query.query)) {
    if (range) {
      if (query.step === undefined) throw new BadRequestError('a stats range query needs start, end and step');
      params.set('start', String(query.start));
      params.set('end', String(query.end));
      params.set('step', `${query.step}s`);
    } else if (query.time !== undefined) {
      params.set('time', String(query.time));
    }
    return runQuery(backend, 'victorialogs', { method: 'POST', path: range ? 'select/logsql/stats_query_range' : 'select/logsql/stats_query', params }, shape);
  }
  const direction = query.direction ?? 'backward';
  // a newline first: the query may end in a `#` comment
  if (direction === 'forward') params.set('query', `${query.query}\n| sort by (_time) limit ${limit}`);
  params.set('limit', String(limit));
  if (range) {
    params.set('start', String(query.start));
    params.set('end', String(query.end));
  } else if (query.time !== undefined) {
    params.set('end', String(query.time));
  }
  return runQuery(backend, 'victorialogs', { method: 'POST', path: 'select/logsql/query', params }, { ...shape, lines: direction });
}

/**
 * The read paths the proxy forwards: LogsQL queries, hits, facets, field and stream names and
 * values, stats. Inserts, deletes, `/internal/*` and the live tail (an answer that never ends) are
 * refused.
 */
const READ_PATH =
  /^select\/logsql\/(?:query|hits|facets|field_names|field_values|stream_field_names|stream_field_values|streams|stream_ids|stats_query|stats_query_range)$/;

export const isVictoriaLogsReadPath = (path: string) => READ_PATH.test(path);
