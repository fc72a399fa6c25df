/**
 * The merge of a Loki read sent once per label rule (src/connectors/backends/loki-union.ts), and
 * the rewrite cache's admission (src/connectors/label-rewrite.ts), on inputs the Loki double does
 * not produce: structured metadata kept with its line, a line both answers hold kept once,
 * statistics added up, an answer of another kind refused as the backend's failure.
 */
import { expect } from 'chai';
import { mergeAnswers, type MergeJob } from '../src/connectors/backends/loki-union.ts';
import { RewriteCache } from '../src/connectors/label-rewrite.ts';

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const merged = (job: Omit<MergeJob, 'parts'> & { parts: unknown[] }) => {
  const decoded = mergeAnswers({ ...job, parts: job.parts.map(bytes) });
  return 'json' in decoded ? JSON.parse(new TextDecoder().decode(decoded.json)) : decoded;
};
const envelope = (result: unknown[], stats?: unknown) => ({
  status: 'success',
  data: { resultType: 'streams', result, ...(stats !== undefined && { stats }) },
});

describe('label rules: the merge of a Loki read sent once per rule', () => {
  it('Loki’s envelopes: streams of the same labels as one, each line once, metadata kept, ordered and cut, statistics added up', () => {
    const a = { app: 'a', ns: 'x' };
    const b = { ns: 'y', app: 'b' };
    const first = envelope(
      [
        {
          stream: a,
          values: [
            ['3', 'three', { trace: 't3' }],
            ['1', 'one'],
          ],
        },
        { stream: b, values: [['2', 'two']] },
      ],
      { summary: { bytes: 10, queueTime: 0.5 }, querier: { store: { chunk: { lines: 3 } } } },
    );
    const second = envelope(
      [
        {
          stream: { ns: 'x', app: 'a' },
          values: [
            ['4', 'four'],
            ['3', 'three', { trace: 't3' }],
          ],
        },
      ],
      {
        summary: { bytes: 5, queueTime: 0.25 },
        querier: { store: { chunk: { lines: 2 } } },
      },
    );
    expect(merged({ kind: 'envelope', direction: 'backward', limit: 3, parts: [first, second] })).to.deep.equal(
      envelope(
        [
          {
            stream: a,
            values: [
              ['4', 'four'],
              ['3', 'three', { trace: 't3' }],
            ],
          },
          { stream: b, values: [['2', 'two']] },
        ],
        { summary: { bytes: 15, queueTime: 0.75 }, querier: { store: { chunk: { lines: 5 } } } },
      ),
    );
    const forward = merged({ kind: 'envelope', direction: 'forward', limit: 10, parts: [first, second] });
    expect(forward.data.result.map((stream: { values: string[][] }) => stream.values.map(([ts]) => ts))).to.deep.equal([['1', '3', '4'], ['2']]);
  });

  it('the service’s results, label names and values; a part of another kind is a 502', () => {
    const result = (streams: unknown[]) => ({ resultType: 'streams', streams });
    expect(
      merged({
        kind: 'result',
        direction: 'forward',
        limit: 100,
        parts: [
          result([{ labels: { a: '1' }, entries: [['20', 'y']] }]),
          result([
            {
              labels: { a: '1' },
              entries: [
                ['10', 'x'],
                ['20', 'y'],
              ],
            },
          ]),
        ],
      }),
    ).to.deep.equal(
      result([
        {
          labels: { a: '1' },
          entries: [
            ['10', 'x'],
            ['20', 'y'],
          ],
        },
      ]),
    );
    expect(
      merged({
        kind: 'names',
        direction: 'backward',
        limit: 100,
        parts: [
          { status: 'success', data: ['b', 'a'] },
          { status: 'success', data: ['c', 'a'] },
        ],
      }),
    ).to.deep.equal({
      status: 'success',
      data: ['a', 'b', 'c'],
    });
    expect(merged({ kind: 'names', direction: 'backward', limit: 100, parts: [{ status: 'success' }, { status: 'success' }] })).to.deep.equal({
      status: 'success',
    });
    const matrix = { status: 'success', data: { resultType: 'matrix', result: [] } };
    expect(merged({ kind: 'envelope', direction: 'backward', limit: 100, parts: [envelope([]), matrix] })).to.deep.equal({
      failure: { status: 502, message: 'backend answers could not be merged: not a streams answer' },
    });
  });
});

describe('label rules: the rewrite cache', () => {
  it('keeps a rewrite the second time its key is seen, not the first', () => {
    const cache = new RewriteCache<string>();
    const hash = cache.hash('rules', 'query');
    cache.set(hash, 'rules', 'query', 'restricted');
    expect(cache.get(hash, 'rules', 'query')).to.equal(undefined);
    cache.set(hash, 'rules', 'query', 'restricted');
    expect(cache.get(hash, 'rules', 'query')).to.equal('restricted');
    expect(cache.get(cache.hash('other rules', 'query'), 'other rules', 'query')).to.equal(undefined);
    expect(cache.get(cache.hash('rules', 'other query'), 'rules', 'other query')).to.equal(undefined);
    // a key of the same hash is not the one kept
    expect(cache.get(hash, 'other rules', 'query')).to.equal(undefined);
    expect(cache.get(hash, 'rules', 'other query')).to.equal(undefined);
  });
});
