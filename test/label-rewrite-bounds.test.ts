/**
 * What reading a query may cost the service: the label rewrite parses with strict copies of the
 * PromQL and LogQL grammars (src/connectors/label-rewrite.ts), which read every query that parses
 * exactly as the grammars do, stop at the first error instead of searching for a recovery, and
 * give up on a query that takes longer than the parse budget or nests deeper than a tree can be
 * built of. Each is a 400 naming the query. The rewrite cache's hash is seeded per cache.
 */
import { existsSync } from 'node:fs';
import { expect } from 'chai';
import type { LRParser } from '@lezer/lr';
import { parser as logqlParser } from '../src/connectors/logql/parser.ts';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { warmQueryGrammars } from '../src/connectors/grammar-warmup.ts';
import { LOGQL, restrictLogQueries } from '../src/connectors/label-rewrite-logql.ts';
import { parseSelector, PROMQL, readQuery, restrictQuery, RewriteCache, type QueryGrammar } from '../src/connectors/label-rewrite.ts';
import { ParseBudget } from '../src/connectors/parse-budget.ts';
import { BadRequestError } from '../src/errors.ts';

const PROMQL_QUERIES = [
  'up',
  'sum by (namespace, pod) (rate(http_requests_total{job="api", code=~"5.."}[5m])) / on (namespace, pod) group_left sum(rate(x[5m]))',
  'max_over_time(rate(container_cpu_usage_seconds_total{container!="", }[2m])[30m:1m] offset 1h) # a comment',
  '{__name__="up", # inside\n job="a"}',
  'label_replace(up{job=~"api|web"}, "service", "$1", "job", "(.*)") unless absent(process_start_time_seconds{job="api"})',
  'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket{route="/x"}[5m]))) @ start()',
  'sum without (instance) (avg_over_time(up[1h] offset -5m)) > bool 0.5',
  'topk(3, count by (__name__) ({__name__=~".+"}))',
  Array(150).fill('rate(a{b="c"}[1m])').join(' + '),
];

const LOGQL_QUERIES = [
  '{app="api"}',
  'sum by (namespace, level) (count_over_time({app="api", cluster=~"eu-.*"} |= "error" | json | level=~"error|fatal" [5m]))',
  '{app="batch"} | line_format "{{.msg}}" | label_format team="{{.owner}}" # a comment',
  'max by (pod) (max_over_time({app="worker"} | json | unwrap duration_seconds [10m])) or vector(1)',
  'sum(rate({app="web"} |~ "timeout|refused" | pattern "<ip> - <_> <status>" | status >= 500 [5m])) / sum(rate({app="web"}[5m]))',
  Array(150).fill('count_over_time({a="b"} |= "x" [1m])').join(' + '),
];

/** A grammar whose parser fails as a deep enough nesting fails the tree's building: by exhausting the call stack. */
const exhausting: QueryGrammar = {
  parser: {
    startParse: () => ({
      parsedPos: 0,
      advance() {
        throw new RangeError('Maximum call stack size exceeded');
      },
    }),
  } as unknown as LRParser,
  doesNotParse: 'does not parse',
};

describe('label rules: what reading a query may cost', () => {
  // as the service does when its connector routes are registered, so the budget meets compiled parsers
  before(() => warmQueryGrammars());

  it('reads every query that parses into the tree the grammar itself gives, PromQL and LogQL', () => {
    for (const query of PROMQL_QUERIES) expect(readQuery(PROMQL, query, 'the query').toString(), query).to.equal(promqlParser.parse(query).toString());
    for (const query of LOGQL_QUERIES) expect(readQuery(LOGQL, query, 'the query').toString(), query).to.equal(logqlParser.parse(query).toString());
  });

  it('stops at the first error of a malformed query and names where, without recovering from it', () => {
    const rules = [parseSelector('{namespace="checkout"}', 'rule')];
    expect(() => restrictQuery('sum(rate(x[5m]) by (', rules)).to.throw(BadRequestError, /^the query does not parse at character \d+$/);
    expect(() => restrictQuery('{'.repeat(65_536), rules)).to.throw(BadRequestError, 'the query does not parse at character 2');
    expect(() => restrictQuery('up{a=}', rules)).to.throw(BadRequestError, 'the query does not parse at character 6');
    expect(() => restrictLogQueries('{'.repeat(65_536), rules)).to.throw(BadRequestError, 'the query does not parse as LogQL at character 2');
    expect(() => restrictLogQueries('{} |=', rules)).to.throw(BadRequestError, /^the query does not parse as LogQL at character \d+$/);
    expect(() => parseSelector('{namespace="checkout"', 'body.rules[0].selector')).to.throw(
      BadRequestError,
      /^body\.rules\[0\]\.selector does not parse at character \d+$/,
    );
  });

  it('refuses a query it cannot read within the budget, and reads it with the default one', () => {
    const dense = Array(200).fill('sum by (a) (rate(x{b="c"}[5m]))').join(' + ');
    expect(() => readQuery(PROMQL, dense, 'the query', 0)).to.throw(BadRequestError, 'the query is too complex: reading it takes over 0 ms');
    expect(readQuery(PROMQL, dense, 'the query').length).to.equal(dense.length);
  });

  it('refuses a query nested deeper than its tree can be built (400), never failing the request', () => {
    expect(() => readQuery(exhausting, 'up', 'the query')).to.throw(BadRequestError, 'the query is nested too deeply to read');
  });

  it('seeds the rewrite cache’s hash per cache, so which keys share a slot cannot be worked out from outside', () => {
    const [one, other] = [new RewriteCache<string>(), new RewriteCache<string>()];
    const keys = ['up', 'sum(rate(x[5m]))', '{a="b"}'];
    expect(keys.map((key) => one.hash('rules', key))).to.not.deep.equal(keys.map((key) => other.hash('rules', key)));
  });
});

describe('label rules: the parse budget', () => {
  const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };

  it('is spent once the thread has run its second half, however long the wall clock takes to give it', function () {
    const budget = new ParseBudget(20);
    expect(budget.spent()).to.equal(false);
    sleep(12);
    // the first half is gone by the wall clock: the second is counted in the thread's own time
    expect(budget.spent()).to.equal(false);
    if (existsSync('/proc/thread-self/schedstat')) {
      sleep(12);
      expect(budget.spent(), 'a half the thread slept through').to.equal(false);
    }
    // a thread that keeps running spends it once it has run a half, even on a machine that gives it a share of a core
    const started = performance.now();
    while (!budget.spent()) busy(1);
    expect(performance.now() - started).to.be.within(5, 1_000);
  });
});
