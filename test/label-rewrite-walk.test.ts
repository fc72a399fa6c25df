/**
 * The walk of a parsed query that the label rewrite reads (walkTree, src/connectors/label-rewrite.ts)
 * visits the nodes a lezer TreeCursor visits, in its order, with the same positions: on PromQL
 * and LogQL queries that parse, that do not (error nodes), and on long ones whose trees hold
 * several buffers and nodes outside them. Every selector the rewrite restricts is found by this walk.
 * What the walk cannot read, and a query over the length bound, is a 400, never a failed request.
 */
import { expect } from 'chai';
import type { Tree } from '@lezer/common';
import { parser as logqlParser } from '../src/connectors/logql/parser.ts';
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { restrictLogQueries } from '../src/connectors/label-rewrite-logql.ts';
import { MAX_QUERY_LENGTH, parseSelector, PROMQL as PROMQL_GRAMMAR, restrictQuery, walkQuery, walkTree } from '../src/connectors/label-rewrite.ts';
import { BadRequestError } from '../src/errors.ts';

function byCursor(tree: Tree): string[] {
  const seen: string[] = [];
  const cursor = tree.cursor();
  do seen.push(`${cursor.type.name}:${cursor.from}-${cursor.to}`);
  while (cursor.next());
  return seen;
}

function byWalk(tree: Tree): string[] {
  const seen: string[] = [];
  walkTree(tree, { node: (type, from, to) => seen.push(`${type.name}:${from}-${to}`) });
  return seen;
}

const PROMQL = [
  'up',
  'sum by (namespace) (rate(http_requests_total{job="api", code=~"5.."}[5m])) / on (namespace) group_left sum(rate(x[5m]))',
  'max_over_time(rate(container_cpu_usage_seconds_total{container!="", }[2m])[30m:1m] offset 1h) # a comment',
  '{__name__="up", # inside\n job="a"}',
  'info(up{job="a"})',
  'sum(rate(x{a="b"}[5m]) by (',
  'x{a=}',
  ')(',
];

const LOGQL = [
  '{app="api"}',
  'sum by (namespace, level) (count_over_time({app="api", cluster=~"eu-.*"} |= "error" | json | level=~"error|fatal" [5m]))',
  '{app="batch"} | line_format "{{.msg}}" | label_format team="{{.owner}}" # a comment',
  'max by (pod) (max_over_time({app="worker"} | json | unwrap duration_seconds [10m])) or vector(1)',
  '{app="api"',
  '{} |=',
];

describe('label rules: the walk of a parsed query', () => {
  it('visits the nodes a TreeCursor visits, in order, on PromQL', () => {
    const queries = [...PROMQL, `${PROMQL.slice(0, 4).join(' or ')} or ${Array(300).fill('rate(a{b="c"}[1m])').join(' + ')}`];
    for (const query of queries) {
      const tree = promqlParser.parse(query);
      expect(byWalk(tree), query).to.deep.equal(byCursor(tree));
    }
  });

  it('visits the nodes a TreeCursor visits, in order, on LogQL', () => {
    const queries = [...LOGQL, Array(300).fill('count_over_time({a="b"} |= "x" [1m])').join(' + ')];
    for (const query of queries) {
      const tree = logqlParser.parse(query);
      expect(byWalk(tree), query).to.deep.equal(byCursor(tree));
    }
  });

  it('refuses a query over the length bound before parsing it, PromQL and LogQL alike (400)', () => {
    const rules = [parseSelector('{namespace="checkout"}', 'rule')];
    const promql = `up${' '.repeat(MAX_QUERY_LENGTH - 1)}`;
    expect(() => restrictQuery(promql, rules)).to.throw(BadRequestError, `the query is longer than ${MAX_QUERY_LENGTH} characters`);
    expect(restrictQuery(promql.slice(0, MAX_QUERY_LENGTH), rules)).to.include('namespace="checkout"');
    const logql = `{app="a"}${' '.repeat(MAX_QUERY_LENGTH)}`;
    expect(() => restrictLogQueries(logql, rules)).to.throw(BadRequestError, `the query is longer than ${MAX_QUERY_LENGTH} characters`);
  });

  it('turns what the walk cannot read into a 400 naming the query, and lets its own refusals through', () => {
    const unreadable = {
      node: () => {
        throw new TypeError("Cannot read properties of undefined (reading 'id')");
      },
    };
    expect(() => walkQuery(PROMQL_GRAMMAR, 'up', 'the query', unreadable)).to.throw(BadRequestError, 'the query could not be read by its grammar');
    const refusing = {
      node: () => {
        throw new BadRequestError('refused by the visitor');
      },
    };
    expect(() => walkQuery(PROMQL_GRAMMAR, 'up', 'the query', refusing)).to.throw(BadRequestError, 'refused by the visitor');
  });
});
