/**
 * The LogQL parser generated from src/connectors/logql/logql.grammar against the parser of the
 * npm package @grafana/lezer-logql 0.3.0, which the grammar is vendored from: every query of a
 * corpus parses to the same tree (`Tree.toString()`, error nodes included), except the LogRangeExpr
 * forms the grammar adds, which the package refused and the generated parser reads without error.
 *
 * test/fixtures/logql-trees.json holds the corpus and the package's tree of each query, made once
 * with the package installed: `parser.parse(query).toString()` of `import { parser } from
 * '@grafana/lezer-logql'` for each query. Its sources (`source`): the cases of lezer-logql's own
 * test/expression.txt; every string literal of test/*.ts that reads as a query (the LogQL ones, and
 * the PromQL and LogsQL ones beside them); queries generated over the grammar
 * (selectors, line filters, parsers, label filters, formats, drop/keep, unwrap with and without a
 * conversion function and label filters after it, every LogRangeExpr form with and without
 * offset, range and vector aggregations with grouping, binary operations with bool, on, ignoring,
 * group_left and group_right, and/or/unless, literals, vector(), label_replace(), comments); and
 * malformed ones (prefixes of those cut at seeded random places, and typos). `added` marks the
 * queries of the added forms, flagged as they were written. The package is the reference because,
 * from the grammar without the added productions, lezer-generator 1.8.0 (which built the package)
 * generates exactly the package's parse tables, and 1.8.1 the same tables but for one entry of
 * stateData: 1.8.0 repeats a token at the end of the token precedence table, where the parser,
 * which reads a token's first place in it, never looks.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { Tree } from '@lezer/common';
import { parser } from '../src/connectors/logql/parser.ts';

interface Case {
  query: string;
  source: 'lezer-logql' | 'test' | 'generated' | 'malformed';
  tree: string;
  added?: boolean;
}

const corpus: Case[] = JSON.parse(readFileSync(new URL('./fixtures/logql-trees.json', import.meta.url), 'utf8'));

const hasError = (tree: string) => tree.includes('⚠');

/**
 * Malformed queries close to the added forms, which both parsers refuse but recover from
 * differently: the generated parser reads more of each as one of the added forms before the error.
 */
const RECOVERED_DIFFERENTLY = [
  'stddev_over_time(({ app = `raw\\d` } !~ "(?i)x" | unpack | unwrap du',
  'sum_over_time({a="b"} | json | unwrap x [5m] offset)',
  'sum_over_time(({a="b"} | json | unwrap x) offset 1h [5m])',
  'sum_over_time(({a="b"} | json | unwrap x) [5m] offset 1h offset 1h)',
  'sum_over_time(({a="b"} | json | unwrap x)) [5m]',
];

/** The children of each LogRangeExpr node, by name. */
function logRanges(tree: Tree): string[][] {
  const found: string[][] = [];
  tree.iterate({
    enter: (node) => {
      if (node.name !== 'LogRangeExpr') return;
      const children: string[] = [];
      for (let child = node.node.firstChild; child; child = child.nextSibling) children.push(child.name);
      found.push(children);
    },
  });
  return found;
}

describe('LogQL grammar: the generated parser against @grafana/lezer-logql', () => {
  it('holds a corpus of every source', () => {
    const bySource = new Map<string, number>();
    for (const c of corpus) bySource.set(c.source, (bySource.get(c.source) ?? 0) + 1);
    expect(corpus.length).to.be.at.least(1000);
    expect(bySource.get('lezer-logql')).to.be.at.least(79);
    expect(bySource.get('test')).to.be.at.least(200);
    expect(bySource.get('generated')).to.be.at.least(700);
    expect(bySource.get('malformed')).to.be.at.least(90);
    expect(corpus.filter((c) => c.added)).to.have.length.at.least(80);
    expect(new Set(corpus.map((c) => c.query)).size, 'distinct queries').to.equal(corpus.length);
  });

  it('parses every query but the added forms to the tree the package gave, error nodes included', () => {
    const differing = corpus
      .filter((c) => !c.added && !RECOVERED_DIFFERENTLY.includes(c.query))
      .filter((c) => parser.parse(c.query).toString() !== c.tree)
      .map((c) => c.query);
    expect(differing).to.deep.equal([]);
  });

  it('reads the added forms without error, as Selector PipelineExpr UnwrapExpr Range and an optional OffsetExpr, which the package refused', () => {
    const added = corpus.filter((c) => c.added);
    for (const c of added) {
      expect(hasError(c.tree), `the package on ${c.query}`).to.be.true;
      const tree = parser.parse(c.query);
      expect(hasError(tree.toString()), c.query).to.be.false;
      const forms = logRanges(tree).map((children) => children.join(' '));
      expect(forms, c.query).to.satisfy((all: string[]) =>
        all.some((form) => form === 'Selector PipelineExpr UnwrapExpr Range OffsetExpr' || form === 'Selector PipelineExpr UnwrapExpr Range'),
      );
    }
    const withOffset = added.filter((c) => /\] offset/.test(c.query));
    const parenthesised = added.filter((c) => /\) \[/.test(c.query.replace(/(bytes|duration|duration_seconds)\(\w+\)/g, '')));
    expect(withOffset.length, 'with offset').to.be.at.least(20);
    expect(parenthesised.length, 'in parentheses').to.be.at.least(20);
  });

  it('refuses the malformed queries close to the added forms, as the package does, recovering differently', () => {
    for (const query of RECOVERED_DIFFERENTLY) {
      const expected = corpus.find((c) => c.query === query);
      expect(expected, query).to.exist;
      expect(hasError(expected!.tree), `the package on ${query}`).to.be.true;
      const tree = parser.parse(query).toString();
      expect(hasError(tree), query).to.be.true;
      expect(tree, query).to.not.equal(expected!.tree);
    }
  });
});
