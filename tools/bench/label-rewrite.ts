/**
 * Benchmark of the label-rule rewrite of PromQL (src/connectors/label-rewrite.ts) and LogQL
 * (src/connectors/label-rewrite-logql.ts) on queries of 1 KiB: p50 and p99 of restricting each
 * under one rule and under two rules (their union), beside the baseline of parsing it alone, and
 * the target (p99 ≤ 200 µs). In process, no backend.
 *
 *   npm run bench:label-rewrite
 *   npm run bench:label-rewrite -- --samples 20000
 */
import os from 'node:os';
import { parser as logqlParser } from '@grafana/lezer-logql';
import { parser } from '@prometheus-io/lezer-promql';
import { restrictLogQuery } from '../../src/connectors/label-rewrite-logql.ts';
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

function percentiles(samples: Float64Array): { p50: number; p99: number } {
  const sorted = Float64Array.from(samples).sort();
  return { p50: sorted[Math.floor(sorted.length * 0.5)]!, p99: sorted[Math.floor(sorted.length * 0.99)]! };
}

function time(samples: number, work: () => unknown): { p50: number; p99: number } {
  for (let i = 0; i < 2_000; i++) work();
  const timings = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const started = process.hrtime.bigint();
    work();
    timings[i] = Number(process.hrtime.bigint() - started) / 1000;
  }
  return percentiles(timings);
}

const samples = Number(arg('samples', '10000'));
const query = queryOfOneKiB();
const one = [parseSelector('{namespace="checkout", env=~"prod|staging"}', 'rule')];
const two = [...one, parseSelector('{team="payments"}', 'rule')];

const baseline = time(samples, () => parser.parse(query));
const single = time(samples, () => restrictQuery(query, one));
const union = time(samples, () => restrictQuery(query, two));

const logQuery = logQueryOfOneKiB();
const oneLog = [parseSelector('{namespace="checkout", env=~"prod|staging"}', 'rule')];
const twoLog = [parseSelector('{namespace="checkout"}', 'rule'), parseSelector('{namespace=~"payments|billing"}', 'rule')];
const logBaseline = time(samples, () => logqlParser.parse(logQuery));
const logSingle = time(samples, () => restrictLogQuery(logQuery, oneLog));
const logUnion = time(samples, () => restrictLogQuery(logQuery, twoLog));

const row = (label: string, { p50, p99 }: { p50: number; p99: number }, target: string) =>
  `${label.padEnd(34)} p50 ${p50.toFixed(1).padStart(7)} µs   p99 ${p99.toFixed(1).padStart(7)} µs   ${target}`;
console.log(`label rewrite of a ${query.length}-byte query, ${samples} samples each; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`);
console.log(row('baseline: parse only', baseline, ''));
console.log(row('rewrite, one rule', single, `target p99 ≤ ${TARGET_P99_US} µs: ${single.p99 <= TARGET_P99_US ? 'met' : 'MISSED'}`));
console.log(row('rewrite, two rules (union)', union, `target p99 ≤ ${TARGET_P99_US} µs: ${union.p99 <= TARGET_P99_US ? 'met' : 'MISSED'}`));
console.log(`label rewrite of a ${logQuery.length}-byte LogQL query`);
console.log(row('baseline: parse only', logBaseline, ''));
console.log(row('rewrite, one rule', logSingle, `target p99 ≤ ${TARGET_P99_US} µs: ${logSingle.p99 <= TARGET_P99_US ? 'met' : 'MISSED'}`));
console.log(row('rewrite, two rules (one regex)', logUnion, `target p99 ≤ ${TARGET_P99_US} µs: ${logUnion.p99 <= TARGET_P99_US ? 'met' : 'MISSED'}`));
