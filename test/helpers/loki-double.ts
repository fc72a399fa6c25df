/**
 * An in-test server answering Grafana Loki's documented HTTP API (https://grafana.com/docs/loki/latest/reference/loki-http-api/):
 * `GET|POST /loki/api/v1/labels` and `label/<name>/values` (narrowed by a stream selector in
 * `query`), `series`, `query` and `query_range`, for
 * the streams it is given per tenant. It is the one test double standing in for a real backend in
 * this suite: Loki is under the AGPL and is not built or run here (see docs/contributing.md), so the
 * Loki connector's tests read this instead. It keeps what those tests rely on from Loki 3:
 * multi-tenancy (`auth_enabled: true`: no `X-Scope-OrgID` is 401 `no org id`), the Prometheus
 * envelope, streams of `[ns string, line]`, `limit` over all streams and `direction`, log lines
 * refused to an instant query, yacc-style parse errors (`parse error at line 1, col N: syntax
 * error: unexpected …`), and metric queries over a LogQL subset: stream selectors (`=`, `!=`, `=~`,
 * `!~`), line filters (`|=`, `!=`, `|~`, `!~`), `count_over_time`, `rate`, `bytes_over_time` and
 * `sum|count|min|max|avg [by|without (…)]`, parentheses and `or` between metric queries, a range query's start and end aligned to its step as
 * Loki's query frontend aligns them. Anything else is a parse error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DoubleStream {
  labels: Record<string, string>;
  /** `[nanoseconds since the epoch, line]` */
  entries: Array<[bigint, string]>;
}

export interface RunningLokiDouble {
  url: string;
  stop(): Promise<void>;
}

const NS = 1_000_000_000n;

class ParseError extends Error {}

// ---- LogQL subset: tokens, parser, evaluation ----

type Token = { kind: 'ident' | 'string' | 'duration' | 'op' | 'end'; text: string; col: number };

const OPERATORS = ['|=', '|~', '!=', '!~', '=~', '=', '{', '}', '(', ')', '[', ']', ',', '|'];

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const char = query[i]!;
    if (/\s/.test(char)) {
      i++;
      continue;
    }
    const col = i + 1;
    if (char === '"' || char === '`') {
      let end = i + 1;
      let text = '';
      while (end < query.length && query[end] !== char) {
        if (char === '"' && query[end] === '\\' && end + 1 < query.length) {
          text += query[end + 1];
          end += 2;
        } else text += query[end++];
      }
      if (end >= query.length) throw new ParseError(`parse error at line 1, col ${col}: literal not terminated`);
      tokens.push({ kind: 'string', text, col });
      i = end + 1;
      continue;
    }
    const duration = /^\d+(?:ms|s|m|h|d)/.exec(query.slice(i));
    if (duration) {
      tokens.push({ kind: 'duration', text: duration[0], col });
      i += duration[0].length;
      continue;
    }
    const ident = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(query.slice(i));
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], col });
      i += ident[0].length;
      continue;
    }
    const op = OPERATORS.find((candidate) => query.startsWith(candidate, i));
    if (!op) throw new ParseError(`parse error at line 1, col ${col}: syntax error: unexpected ${char}`);
    tokens.push({ kind: 'op', text: op, col });
    i += op.length;
  }
  tokens.push({ kind: 'end', text: '$end', col: query.length + 1 });
  return tokens;
}

interface Matcher {
  name: string;
  op: string;
  value: string;
}
interface LogExpr {
  matchers: Matcher[];
  filters: Array<{ op: string; value: string }>;
}
type MetricExpr =
  | { kind: 'range'; fn: string; log: LogExpr; rangeNs: bigint }
  | { kind: 'agg'; fn: string; grouping?: { without: boolean; labels: string[] }; inner: MetricExpr }
  | { kind: 'or'; left: MetricExpr; right: MetricExpr };

const AGGREGATIONS = ['sum', 'count', 'min', 'max', 'avg'];
const RANGE_FUNCTIONS = ['count_over_time', 'rate', 'bytes_over_time'];

function durationNs(text: string): bigint {
  const [, amount, unit] = /^(\d+)(ms|s|m|h|d)$/.exec(text)!;
  const ms = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 'ms']!;
  return BigInt(amount!) * BigInt(ms) * 1_000_000n;
}

function parse(query: string): { log: LogExpr } | { metric: MetricExpr } {
  const tokens = tokenize(query);
  let at = 0;
  const peek = () => tokens[at]!;
  const fail = (expecting: string): never => {
    const token = peek();
    const shown = token.kind === 'end' ? '$end' : token.kind === 'string' ? 'STRING' : token.kind === 'ident' ? 'IDENTIFIER' : token.text;
    throw new ParseError(`parse error at line 1, col ${token.col}: syntax error: unexpected ${shown}, expecting ${expecting}`);
  };
  const expect = (text: string, expecting = text) => (peek().text === text && peek().kind === 'op' ? tokens[at++]! : fail(expecting));
  const expectKind = (kind: Token['kind'], expecting: string) => (peek().kind === kind ? tokens[at++]! : fail(expecting));

  const selector = (): LogExpr => {
    expect('{');
    const matchers: Matcher[] = [];
    for (;;) {
      const name = expectKind('ident', 'IDENTIFIER').text;
      const op = ['=', '!=', '=~', '!~'].includes(peek().text) ? tokens[at++]!.text : fail('= or != or =~ or !~');
      const value = expectKind('string', 'STRING').text;
      matchers.push({ name, op, value });
      if (peek().text === '}') break;
      expect(',', '} or ,');
    }
    at++;
    const filters: LogExpr['filters'] = [];
    while (['|=', '|~', '!=', '!~'].includes(peek().text)) {
      const op = tokens[at++]!.text;
      filters.push({ op, value: expectKind('string', 'STRING').text });
    }
    return { matchers, filters };
  };
  const grouping = () => {
    if (peek().text !== 'by' && peek().text !== 'without') return undefined;
    const without = tokens[at++]!.text === 'without';
    expect('(');
    const labels: string[] = [];
    for (;;) {
      labels.push(expectKind('ident', 'IDENTIFIER').text);
      if (peek().text === ')') break;
      expect(',', ') or ,');
    }
    at++;
    return { without, labels };
  };
  const metric = (): MetricExpr => {
    let left = operand();
    while (peek().kind === 'ident' && peek().text === 'or') {
      at++;
      left = { kind: 'or', left, right: operand() };
    }
    return left;
  };
  const operand = (): MetricExpr => {
    if (peek().kind === 'op' && peek().text === '(') {
      at++;
      const inner = metric();
      expect(')');
      return inner;
    }
    const name = peek().text;
    if (RANGE_FUNCTIONS.includes(name)) {
      at++;
      expect('(');
      const log = selector();
      expect('[', '[');
      const rangeNs = durationNs(expectKind('duration', 'DURATION').text);
      expect(']');
      expect(')');
      return { kind: 'range', fn: name, log, rangeNs };
    }
    if (AGGREGATIONS.includes(name)) {
      at++;
      let group = grouping();
      expect('(');
      const inner = metric();
      expect(')');
      group ??= grouping();
      return { kind: 'agg', fn: name, ...(group && { grouping: group }), inner };
    }
    return fail('{ or an aggregation');
  };
  const result = peek().text === '{' ? { log: selector() } : { metric: metric() };
  if (peek().kind !== 'end') fail('$end');
  return result;
}

/** A label regex as Loki reads it (RE2, anchored; a leading `(?i)` makes it case-insensitive); one JavaScript cannot read is Loki's parse error. */
function fullMatch(pattern: string): RegExp {
  const insensitive = pattern.startsWith('(?i)');
  try {
    return new RegExp(`^(?:${insensitive ? pattern.slice(4) : pattern})$`, insensitive ? 'i' : '');
  } catch {
    throw new ParseError(`parse error : error parsing regexp: invalid or unsupported Perl syntax: \`${pattern}\``);
  }
}

function matches(labels: Record<string, string>, matchers: Matcher[]): boolean {
  return matchers.every(({ name, op, value }) => {
    const actual = labels[name] ?? '';
    if (op === '=') return actual === value;
    if (op === '!=') return actual !== value;
    if (op === '=~') return fullMatch(value).test(actual);
    return !fullMatch(value).test(actual);
  });
}

function passes(line: string, filters: LogExpr['filters']): boolean {
  return filters.every(({ op, value }) => {
    if (op === '|=') return line.includes(value);
    if (op === '!=') return !line.includes(value);
    if (op === '|~') return new RegExp(value).test(line);
    return !new RegExp(value).test(line);
  });
}

/** The matching streams with their matching entries in `[from, to)`. */
function select(streams: DoubleStream[], log: LogExpr, from: bigint, to: bigint, inclusiveEnd = false): DoubleStream[] {
  return streams
    .filter((stream) => matches(stream.labels, log.matchers))
    .map((stream) => ({
      labels: stream.labels,
      entries: stream.entries.filter(([time, line]) => time >= from && (inclusiveEnd ? time <= to : time < to) && passes(line, log.filters)),
    }));
}

type Sample = { labels: Record<string, string>; value: number };
const keyOf = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

/** The instant vector of a metric expression at `time` (ns); a series without a sample is left out. */
function evaluate(expr: MetricExpr, streams: DoubleStream[], time: bigint): Sample[] {
  if (expr.kind === 'or') {
    // the left side's samples, and the right side's whose labels the left has not
    const left = evaluate(expr.left, streams, time);
    const taken = new Set(left.map((sample) => keyOf(sample.labels)));
    return [...left, ...evaluate(expr.right, streams, time).filter((sample) => !taken.has(keyOf(sample.labels)))];
  }
  if (expr.kind === 'range') {
    // the window (time - range, time]
    return select(streams, expr.log, time - expr.rangeNs + 1n, time, true)
      .filter((stream) => stream.entries.length > 0)
      .map((stream) => {
        const count = stream.entries.length;
        const bytes = stream.entries.reduce((total, [, line]) => total + Buffer.byteLength(line), 0);
        const seconds = Number(expr.rangeNs) / 1e9;
        const value = expr.fn === 'count_over_time' ? count : expr.fn === 'rate' ? count / seconds : bytes;
        return { labels: stream.labels, value };
      });
  }
  const groups = new Map<string, { labels: Record<string, string>; values: number[] }>();
  for (const sample of evaluate(expr.inner, streams, time)) {
    const labels = Object.fromEntries(
      Object.entries(sample.labels).filter(([name]) => (expr.grouping ? expr.grouping.labels.includes(name) !== expr.grouping.without : false)),
    );
    const key = keyOf(labels);
    const group = groups.get(key) ?? { labels, values: [] };
    group.values.push(sample.value);
    groups.set(key, group);
  }
  return [...groups.values()].map(({ labels, values }) => {
    const sum = values.reduce((a, b) => a + b, 0);
    const value = { sum, count: values.length, min: Math.min(...values), max: Math.max(...values), avg: sum / values.length }[expr.fn as 'sum']!;
    return { labels, value };
  });
}

// ---- HTTP ----

/** A time parameter in ns: RFC 3339, unix seconds (with a fraction, or ten digits or fewer), else nanoseconds. */
function timeParam(value: string | null, fallback: bigint): bigint {
  if (value === null || value === '') return fallback;
  if (/^\d+$/.test(value)) return value.length <= 10 ? BigInt(value) * NS : BigInt(value);
  if (/^\d+\.\d+$/.test(value)) return BigInt(Math.round(Number(value) * 1e9));
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new ParseError(`invalid parameter "${value}": cannot parse time`);
  return BigInt(ms) * 1_000_000n;
}

const seconds = (ns: bigint) => Number(ns) / 1e9;

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  if (typeof body === 'string') {
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end(`${body}\n`);
  } else {
    res.setHeader('content-type', 'application/json; charset=UTF-8');
    res.end(JSON.stringify(body));
  }
}

const success = (data: unknown) => ({ status: 'success', ...(data !== undefined && { data }) });

function answer(path: string, params: URLSearchParams, streams: DoubleStream[]): { status: number; body: unknown } {
  const now = BigInt(Date.now()) * 1_000_000n;
  const end = timeParam(params.get('end'), now);
  if (path === 'labels' || path === 'series' || /^label\/[^/]+\/values$/.test(path)) {
    const start = timeParam(params.get('start'), end - 6n * 3600n * NS);
    const live = streams.filter((stream) => stream.entries.some(([time]) => time >= start && time < end));
    if (path === 'series') {
      const selectors = params.getAll('match[]').map((text) => parse(text));
      const chosen = live.filter((stream) => selectors.some((parsed) => 'log' in parsed && matches(stream.labels, parsed.log.matchers)));
      return { status: 200, body: success(chosen.map((stream) => stream.labels)) };
    }
    // `query`, a stream selector, narrows the streams whose labels are listed (as Loki 3's labels APIs)
    const narrowing = params.get('query') ? parse(params.get('query')!) : null;
    if (narrowing && !('log' in narrowing && narrowing.log.filters.length === 0)) throw new ParseError('parse error : only label matchers are supported');
    const selected = narrowing && 'log' in narrowing ? live.filter((stream) => matches(stream.labels, narrowing.log.matchers)) : live;
    const name = path === 'labels' ? null : decodeURIComponent(path.split('/')[1]!);
    const found = new Set(selected.flatMap((stream) => (name === null ? Object.keys(stream.labels) : name in stream.labels ? [stream.labels[name]!] : [])));
    return { status: 200, body: success(found.size > 0 ? [...found].sort() : undefined) };
  }
  const query = params.get('query') ?? '';
  const parsed = parse(query);
  if (path === 'query') {
    if ('log' in parsed) return { status: 400, body: 'log queries are not supported as an instant query type, please change your query to a range query type' };
    const time = timeParam(params.get('time'), now);
    const result = evaluate(parsed.metric, streams, time).map(({ labels, value }) => ({ metric: labels, value: [seconds(time), String(value)] }));
    return { status: 200, body: success({ resultType: 'vector', result }) };
  }
  const start = timeParam(params.get('start'), end - 3600n * NS);
  if ('log' in parsed) {
    const limit = Number(params.get('limit') ?? 100);
    const forward = params.get('direction') === 'forward';
    const lines = select(streams, parsed.log, start, end)
      .flatMap((stream) => stream.entries.map(([time, line]) => ({ labels: stream.labels, time, line })))
      .sort((a, b) => (a.time === b.time ? 0 : a.time < b.time === forward ? -1 : 1))
      .slice(0, limit);
    const grouped = new Map<string, { stream: Record<string, string>; values: Array<[string, string]> }>();
    for (const { labels, time, line } of lines) {
      const key = keyOf(labels);
      const group = grouped.get(key) ?? { stream: labels, values: [] };
      group.values.push([String(time), line]);
      grouped.set(key, group);
    }
    // Loki's statistics of the query, one figure of them
    return { status: 200, body: success({ resultType: 'streams', result: [...grouped.values()], stats: { summary: { totalEntriesReturned: lines.length } } }) };
  }
  const stepSeconds = params.get('step') ? Number(params.get('step')) : Math.max(1, Math.floor(seconds(end - start) / 250));
  const step = BigInt(Math.round(stepSeconds * 1e9));
  // Loki's query frontend aligns a metric query to its step: start down, end up.
  const alignedStart = start - (start % step);
  const alignedEnd = end % step === 0n ? end : end + step - (end % step);
  const series = new Map<string, { metric: Record<string, string>; values: Array<[number, string]> }>();
  for (let time = alignedStart; time <= alignedEnd; time += step) {
    for (const { labels, value } of evaluate(parsed.metric, streams, time)) {
      const key = keyOf(labels);
      const entry = series.get(key) ?? { metric: labels, values: [] };
      entry.values.push([seconds(time), String(value)]);
      series.set(key, entry);
    }
  }
  return { status: 200, body: success({ resultType: 'matrix', result: [...series.values()] }) };
}

export async function startLokiDouble(tenants: Record<string, DoubleStream[]>): Promise<RunningLokiDouble> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://loki');
      const path = /^\/loki\/api\/v1\/(labels|series|query|query_range|label\/[^/]+\/values)$/.exec(url.pathname)?.[1];
      if (!path || (req.method !== 'GET' && req.method !== 'POST')) return send(res, 404, '404 page not found');
      const tenant = req.headers['x-scope-orgid'];
      if (typeof tenant !== 'string' || !tenant) return send(res, 401, 'no org id');
      const params = new URLSearchParams(url.search);
      if (req.method === 'POST' && (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
        for (const [name, value] of new URLSearchParams(body)) params.append(name, value);
      try {
        const { status, body: answered } = answer(path, params, tenants[tenant] ?? []);
        send(res, status, answered);
      } catch (err) {
        if (err instanceof ParseError) send(res, 400, err.message);
        else send(res, 500, String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
