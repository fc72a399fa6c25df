/**
 * The LogQL rewrite of label rules (src/connectors/label-rewrite-logql.ts) on constructs the Loki
 * double does not evaluate: the rule's matchers land in every stream selector (pipelines,
 * `label_format`, `unwrap`, binary operations, `or`/`unless`, comments), several rules become one
 * regex matcher when that is exact, else one query per rule (a log query) or their `or` (a metric
 * query), at most 10, and what does not parse is refused naming where.
 */
import { expect } from 'chai';
import { checkStreamSelector, restrictLogQueries, restrictLogQuery } from '../src/connectors/label-rewrite-logql.ts';
import { parseSelector } from '../src/connectors/label-rewrite.ts';

const CHECKOUT = [parseSelector('{namespace="checkout"}', 'rule')];

describe('label rules: the LogQL rewrite', () => {
  it('adds the rule to every stream selector of log and metric queries', () => {
    const cases: Array<[string, string]> = [
      ['{app="api"}', '{app="api", namespace="checkout"}'],
      ['{app="api", namespace="payments"} |= "x"', '{app="api", namespace="payments", namespace="checkout"} |= "x"'],
      [
        '{app="api"} | json | label_format namespace="payments" | line_format "{{.msg}}"',
        '{app="api", namespace="checkout"} | json | label_format namespace="payments" | line_format "{{.msg}}"',
      ],
      [
        'sum by (app) (rate({app="a"}[5m])) or sum by (app) (rate({app="b"} |~ "e.+" [5m]))',
        'sum by (app) (rate({app="a", namespace="checkout"}[5m])) or sum by (app) (rate({app="b", namespace="checkout"} |~ "e.+" [5m]))',
      ],
      [
        'count_over_time({a="b"}[1m]) / on (a) count_over_time({a="c"}[1m]) unless vector(1)',
        'count_over_time({a="b", namespace="checkout"}[1m]) / on (a) count_over_time({a="c", namespace="checkout"}[1m]) unless vector(1)',
      ],
      // labels named as Object's own properties are labels like any other
      ['{constructor="x", __proto__="y"} | toString="z"', '{constructor="x", __proto__="y", namespace="checkout"} | toString="z"'],
      [
        'sum by (constructor) (count_over_time({hasOwnProperty="a"}[1m]))',
        'sum by (constructor) (count_over_time({hasOwnProperty="a", namespace="checkout"}[1m]))',
      ],
      ['max_over_time({app="w"} | unwrap bytes [10m] offset 1h)', 'max_over_time({app="w", namespace="checkout"} | unwrap bytes [10m] offset 1h)'],
      [
        'sum_over_time({app="w"} | json | unwrap latency [5m] offset 1h)',
        'sum_over_time({app="w", namespace="checkout"} | json | unwrap latency [5m] offset 1h)',
      ],
      [
        'avg_over_time(({app="w"} |= "GET" | logfmt | unwrap duration(took) | __error__="") [5m]) by (pod)',
        'avg_over_time(({app="w", namespace="checkout"} |= "GET" | logfmt | unwrap duration(took) | __error__="") [5m]) by (pod)',
      ],
      [
        'quantile_over_time(0.99, ({app="w"} | json | unwrap bytes(size)) [1h] offset 1d)',
        'quantile_over_time(0.99, ({app="w", namespace="checkout"} | json | unwrap bytes(size)) [1h] offset 1d)',
      ],
      ['{app="x" # a comment }\n}', '{app="x", namespace="checkout" # a comment }\n}'],
      ['{app="é"} # {namespace="payments"}', '{app="é", namespace="checkout"} # {namespace="payments"}'],
      // which Loki refuses; the grammar reads it as two log queries, and both are restricted
      ['{app="a"} or {app="b"}', '{app="a", namespace="checkout"} or {app="b", namespace="checkout"}'],
      ['vector(1)', 'vector(1)'],
    ];
    for (const [query, restricted] of cases) expect(restrictLogQuery(query, CHECKOUT), query).to.equal(restricted);
  });

  it('several rules: one anchored regex matcher when each is one = or =~ on the same label', () => {
    const sameLabel = [CHECKOUT[0]!, parseSelector('{namespace=~"pay.+"}', 'rule')];
    expect(restrictLogQuery('{app="api"}', sameLabel)).to.equal('{app="api", namespace=~"checkout|(?:pay.+)"}');
    expect(restrictLogQueries('{app="api"} |= "x"', sameLabel)).to.deep.equal(['{app="api", namespace=~"checkout|(?:pay.+)"} |= "x"']);
  });

  it('several rules on different labels: a log query once per rule, a metric query joined with or, at most 10 rules', () => {
    const mixed = [CHECKOUT[0]!, parseSelector('{team="payments", env="prod"}', 'rule')];
    expect(restrictLogQueries('{app="api"} | json | level="error"', mixed)).to.deep.equal([
      '{app="api", namespace="checkout"} | json | level="error"',
      '{app="api", team="payments", env="prod"} | json | level="error"',
    ]);
    expect(restrictLogQueries('# lines\n{app="api"} # {namespace="payments"}', mixed)).to.deep.equal([
      '# lines\n{app="api", namespace="checkout"} # {namespace="payments"}',
      '# lines\n{app="api", team="payments", env="prod"} # {namespace="payments"}',
    ]);
    expect(restrictLogQueries('sum by (app) (count_over_time({app="api"}[5m])) # total', mixed)).to.deep.equal([
      '(\nsum by (app) (count_over_time({app="api", namespace="checkout"}[5m])) # total\n) or (\nsum by (app) (count_over_time({app="api", team="payments", env="prod"}[5m])) # total\n)',
    ]);
    expect(restrictLogQueries('vector(1)', mixed)).to.deep.equal(['vector(1)']);
    // the same answer from the cache, and the cache keyed by the rules too
    expect(restrictLogQueries('{app="api"} | json | level="error"', mixed)).to.have.length(2);
    expect(restrictLogQueries('{app="api"} | json | level="error"', CHECKOUT)).to.deep.equal(['{app="api", namespace="checkout"} | json | level="error"']);
    expect(() => restrictLogQuery('{app="api"}', mixed)).to.throw('restrictLogQuery: these rules need one query each');
    const eleven = Array.from({ length: 11 }, (_, i) => parseSelector(`{team="t${i}", env="prod"}`, 'rule'));
    expect(() => restrictLogQueries('{app="api"}', eleven)).to.throw(
      '11 label rules apply to you on this Loki connector, and a read is answered as the union of at most 10 rules that are not one matcher on the same label',
    );
    expect(restrictLogQueries('{app="api"}', eleven.slice(0, 10))).to.have.length(10);
  });

  it('a label filter in a pipeline is not a stream selector: the rule goes after the selector alone', () => {
    expect(restrictLogQuery('{app="a"} | json | level="error" | x=~"y"', CHECKOUT)).to.equal('{app="a", namespace="checkout"} | json | level="error" | x=~"y"');
  });

  it('refuses what does not parse, naming where; a stream selector alone where one is asked', () => {
    for (const query of ['{}', '{app="a"', 'sum(', 'x{a="b"}', '{a="b"} |= ', 'sum_over_time(({a="b"} | json | unwrap x) offset 1h [5m])']) {
      expect(() => restrictLogQuery(query, CHECKOUT, 'body.query'), query).to.throw(/^body\.query does not parse as LogQL at character \d+$/);
    }
    expect(() => checkStreamSelector('{a="b"}', 'query')).to.not.throw();
    for (const text of ['{a="b"} |= "x"', 'count_over_time({a="b"}[1m])']) {
      expect(() => checkStreamSelector(text, 'match[] 1'), text).to.throw('match[] 1 must be a stream selector such as {app="checkout"}');
    }
  });
});
