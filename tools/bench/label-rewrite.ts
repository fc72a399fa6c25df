/**
 * Benchmark of the label-rule rewrite of PromQL (src/connectors/label-rewrite.ts) and LogQL
 * (src/connectors/label-rewrite-logql.ts) on queries of 1 KiB: p50 and p99 of restricting each
 * under one rule and under two rules (their union), cold (distinct queries, none found in the
 * rewrite cache: what the target applies to) and warm (the same query again: a cache lookup),
 * beside the baseline of parsing the distinct queries alone and the target (p99 ≤ 200 µs). In
 * process, no backend.
 *
 *   npm run bench:label-rewrite
 *   npm run bench:label-rewrite -- --samples 20000
 */
import os from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { parser as logqlParser } from '../../src/connectors/logql/parser.ts';
import { parser } from '@prometheus-io/lezer-promql';
import { restrictLogQueries } from '../../src/connectors/label-rewrite-logql.ts';
import { parseSelector, restrictQuery } from '../../src/connectors/label-rewrite.ts';

const TARGET_P99_US = 200;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** About 1 KiB of realistic PromQL: aggregations, rates, a subquery, offsets, a join and a comment. */
function queryOfOneKiB(): string {
  const parts = [
    'sum by (namespace, pod) (rate(http_requests_total{job="api", code=~"5.."}[5m]))',
    '/ on (namespace, pod) group_left sum by (namespace, pod) (rate(http_requests_total{job="api"}[5m]))',
    '+ max_over_time(rate(container_cpu_usage_seconds_total{container!="", image!=""}[2m])[30m:1m])',
    '* on (pod) group_left (node) kube_pod_info{created_by_kind="ReplicaSet"}',
    '- avg_over_time(node_load1[10m] offset 1h)',
    'or label_replace(up{job=~"api|web"}, "service", "$1", "job", "(.*)")',
    'unless absent(process_start_time_seconds{job="api"})',
  ];
  let query = parts.join('\n');
  const more = '\nor histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{route="/x"}[5m])))';
  while (query.length + more.length < 1000) query += more;
  // a comment makes up the rest, to exactly 1 KiB
  return `${query}\n# ${'the error ratio, the load of the node and the services that are up '.repeat(20)}`.slice(0, 1024);
}

/** About 1 KiB of realistic LogQL: log pipelines, metric aggregations over them, a binary operation, `or`, a comment. */
function logQueryOfOneKiB(): string {
  const parts = [
    'sum by (namespace, level) (count_over_time({app="api", cluster=~"eu-.*"} |= "error" != "healthz" | json | level=~"error|fatal" [5m]))',
    '/ on (namespace) group_left sum by (namespace) (count_over_time({app="api", cluster=~"eu-.*"} | logfmt [5m]))',
    'or sum by (namespace) (rate({app="web"} |~ "timeout|refused" | pattern "<ip> - <_> <status>" | status >= 500 [5m]))',
    'or max by (pod) (max_over_time({app="worker"} | json | unwrap duration_seconds [10m]))',
    'unless sum by (namespace) (bytes_over_time({app="batch"} | line_format "{{.msg}}" | label_format team="{{.owner}}" [15m]))',
  ];
  let query = parts.join('\n');
  const more = '\nor sum by (namespace) (count_over_time({app="edge", route="/x"} |= "denied" [1m]))';
  while (query.length + more.length < 1000) query += more;
  return `${query}\n# ${'errors by namespace, timeouts of the web tier and the slow workers '.repeat(20)}`.slice(0, 1024);
}

/** `count` distinct variants of a query, each of the same length: a number in a label value, the comment cut to keep the length. */
function variants(query: string, marker: string, count: number): string[] {
  const at = query.indexOf(marker);
  if (at < 0) throw new Error(`no ${marker} in the query`);
  return Array.from({ length: count }, (_, i) => {
    const varied = `${query.slice(0, at)}${marker.slice(0, -1)}${i}"${query.slice(at + marker.length)}`;
    return varied.slice(0, query.length);
  });
}

function percentiles(samples: Float64Array): { p50: number; p99: number } {
  const sorted = Float64Array.from(samples).sort();
  return { p50: sorted[Math.floor(sorted.length * 0.5)]!, p99: sorted[Math.floor(sorted.length * 0.99)]! };
}

const WARM_UP = 2_000;

/** The garbage collector's pauses while a row is timed: on a query of 1 KiB, a young-generation pause is several rewrites long, and the tail is where they land. */
let gcPauses = 0;
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses++;
    gcMs += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

interface Figures {
  p50: number;
  p99: number;
  gcPauses: number;
  gcMs: number;
}

/** Times `work` on the i-th query, after a warm-up on other queries: with distinct queries, no answer is ever found in the cache. */
async function time(samples: number, queries: readonly string[], work: (query: string) => unknown): Promise<Figures> {
  for (let i = 0; i < WARM_UP; i++) work(queries[(samples + i) % queries.length]!);
  // the observer is told of pauses between tasks: let those of the warm-up arrive before counting
  await new Promise((resolve) => setTimeout(resolve, 10));
  gcPauses = 0;
  gcMs = 0;
  const timings = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const query = queries[i % queries.length]!;
    const started = process.hrtime.bigint();
    work(query);
    timings[i] = Number(process.hrtime.bigint() - started) / 1000;
  }
  await new Promise((resolve) => setTimeout(resolve, 10));
  return { ...percentiles(timings), gcPauses, gcMs };
}

const samples = Number(arg('samples', '10000'));
/** Distinct queries for the cold rows (the warm-up reads others than the timed ones); the warm rows repeat one. */
const distinct = samples + WARM_UP;

const one = [parseSelector('{namespace="checkout", env=~"prod|staging"}', 'rule')];
const two = [...one, parseSelector('{team="payments"}', 'rule')];
const query = queryOfOneKiB();
const cold = variants(query, 'route="/x"', distinct);
const promql = {
  baseline: await time(samples, cold, (q) => parser.parse(q)),
  coldOne: await time(samples, cold, (q) => restrictQuery(q, one)),
  coldTwo: await time(samples, cold, (q) => restrictQuery(q, two)),
  warmOne: await time(samples, [query], (q) => restrictQuery(q, one)),
  warmTwo: await time(samples, [query], (q) => restrictQuery(q, two)),
};

const logQuery = logQueryOfOneKiB();
const logCold = variants(logQuery, 'route="/x"', distinct);
const sameLabel = [parseSelector('{namespace="checkout"}', 'rule'), parseSelector('{namespace=~"payments|billing"}', 'rule')];
const logql = {
  baseline: await time(samples, logCold, (q) => logqlParser.parse(q)),
  coldOne: await time(samples, logCold, (q) => restrictLogQueries(q, one)),
  coldSameLabel: await time(samples, logCold, (q) => restrictLogQueries(q, sameLabel)),
  coldTwo: await time(samples, logCold, (q) => restrictLogQueries(q, two)),
  warmOne: await time(samples, [logQuery], (q) => restrictLogQueries(q, one)),
  warmTwo: await time(samples, [logQuery], (q) => restrictLogQueries(q, two)),
};

const verdict = ({ p99 }: { p99: number }) => `target p99 ≤ ${TARGET_P99_US} µs: ${p99 <= TARGET_P99_US ? 'met' : 'MISSED'}`;
const row = (label: string, figures: Figures, baseline?: { p99: number }) =>
  `${label.padEnd(44)} p50 ${figures.p50.toFixed(1).padStart(7)} µs   p99 ${figures.p99.toFixed(1).padStart(7)} µs   ` +
  `GC ${String(figures.gcPauses).padStart(4)} pauses ${figures.gcMs.toFixed(0).padStart(4)} ms` +
  (baseline ? `   ${verdict(figures)} (parse alone p99 ${baseline.p99.toFixed(1)} µs)` : '');
const [load1, load5] = os.loadavg();
console.log(
  `label rewrite of 1024-byte queries, ${samples} samples a row; load average ${load1!.toFixed(1)} (1 min), ${load5!.toFixed(1)} (5 min) on ${os.cpus().length} cores`,
);
console.log(`the target applies to cold rewrites (a query not seen before: parse, walk, splice); warm ones are a cache lookup`);
console.log(`PromQL, ${query.length} bytes`);
console.log(row('baseline: parse only (distinct queries)', promql.baseline));
console.log(row('cold, one rule', promql.coldOne, promql.baseline));
console.log(row('cold, two rules (union by or)', promql.coldTwo, promql.baseline));
console.log(row('warm (cache hit), one rule', promql.warmOne, promql.baseline));
console.log(row('warm (cache hit), two rules', promql.warmTwo, promql.baseline));
console.log(`LogQL, ${logQuery.length} bytes`);
console.log(row('baseline: parse only (distinct queries)', logql.baseline));
console.log(row('cold, one rule', logql.coldOne, logql.baseline));
console.log(row('cold, two rules on one label (one regex)', logql.coldSameLabel, logql.baseline));
console.log(row('cold, two rules on two labels (or)', logql.coldTwo, logql.baseline));
console.log(row('warm (cache hit), one rule', logql.warmOne, logql.baseline));
console.log(row('warm (cache hit), two rules on two labels', logql.warmTwo, logql.baseline));
