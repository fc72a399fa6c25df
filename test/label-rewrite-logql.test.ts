/**
 * The LogQL rewrite of label rules (src/connectors/label-rewrite-logql.ts) on constructs the Loki
 * double does not evaluate: the rule's matchers land in every stream selector (pipelines,
 * `label_format`, `unwrap`, binary operations, `or`/`unless`, comments), several rules become one
 * regex matcher only when that is exact, and what does not parse is refused naming where.
 */
import { expect } from 'chai';
import { checkStreamSelector, restrictLogQuery } from '../src/connectors/label-rewrite-logql.ts';
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
      ['max_over_time({app="w"} | unwrap bytes [10m] offset 1h)', 'max_over_time({app="w", namespace="checkout"} | unwrap bytes [10m] offset 1h)'],
      ['{app="x" # a comment }\n}', '{app="x", namespace="checkout" # a comment }\n}'],
      ['{app="é"} # {namespace="payments"}', '{app="é", namespace="checkout"} # {namespace="payments"}'],
      // which Loki refuses; the grammar reads it as two log queries, and both are restricted
      ['{app="a"} or {app="b"}', '{app="a", namespace="checkout"} or {app="b", namespace="checkout"}'],
      ['vector(1)', 'vector(1)'],
    ];
    for (const [query, restricted] of cases) expect(restrictLogQuery(query, CHECKOUT), query).to.equal(restricted);
  });

  it('several rules: one anchored regex matcher when each is one = or =~ on the same label, else 400', () => {
    const sameLabel = [CHECKOUT[0]!, parseSelector('{namespace=~"pay.+"}', 'rule')];
    expect(restrictLogQuery('{app="api"}', sameLabel)).to.equal('{app="api", namespace=~"checkout|(?:pay.+)"}');
    const mixed = [CHECKOUT[0]!, parseSelector('{team="payments"}', 'rule')];
    expect(() => restrictLogQuery('{app="api"}', mixed)).to.throw(/^several label rules apply to you on this Loki connector/);
  });

  it('refuses what does not parse, naming where; a stream selector alone where one is asked', () => {
    for (const query of ['{}', '{app="a"', 'sum(', 'x{a="b"}', '{a="b"} |= ']) {
      expect(() => restrictLogQuery(query, CHECKOUT, 'body.query'), query).to.throw(/^body\.query does not parse as LogQL at character \d+$/);
    }
    expect(() => checkStreamSelector('{a="b"}', 'query')).to.not.throw();
    for (const text of ['{a="b"} |= "x"', 'count_over_time({a="b"}[1m])']) {
      expect(() => checkStreamSelector(text, 'match[] 1'), text).to.throw('match[] 1 must be a stream selector such as {app="checkout"}');
    }
  });
});
