/**
 * The bounded memory of src/memo.ts: an LruMap drops its least recently used entry past its
 * bound (a get or a set uses one), and boundedMemo remembers a function's answers in one.
 */
import { expect } from 'chai';
import { boundedMemo, LruMap } from '../src/memo.ts';

describe('LruMap', () => {
  it('drops the least recently used entry past its bound; a get or a set uses an entry', () => {
    const map = new LruMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect(map.get('a')).to.equal(1);
    map.set('d', 4);
    expect([...map.keys()], 'b was the least recently used').to.deep.equal(['c', 'a', 'd']);
    map.set('c', 30);
    map.set('e', 5);
    expect([...map.keys()]).to.deep.equal(['d', 'c', 'e']);
    expect(map.get('a')).to.equal(undefined);
    expect(map.get('c')).to.equal(30);
    expect(map.size).to.equal(3);
  });

  it('deletes from the middle and either end, and clears', () => {
    const map = new LruMap<string, number>(10);
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) map.set(key, i);
    expect(map.delete('b')).to.equal(true);
    expect(map.delete('a')).to.equal(true);
    expect(map.delete('d')).to.equal(true);
    expect(map.delete('missing')).to.equal(false);
    expect([...map.keys()]).to.deep.equal(['c']);
    map.set('e', 4);
    expect([...map.keys()]).to.deep.equal(['c', 'e']);
    map.clear();
    expect(map.size).to.equal(0);
    expect([...map.keys()]).to.deep.equal([]);
    map.set('f', 5);
    expect([...map.keys()]).to.deep.equal(['f']);
  });

  it('keeps its order over many evictions', () => {
    const map = new LruMap<number, number>(1000);
    for (let i = 0; i < 100_000; i++) {
      map.set(i, i);
      // every tenth key is used again at once, so it outlives its neighbours
      if (i % 10 === 0) map.get(i - 500);
    }
    expect(map.size).to.equal(1000);
    const keys = [...map.keys()];
    expect(keys[keys.length - 1]).to.equal(99_999);
    expect(new Set(keys).size).to.equal(1000);
    expect(
      keys.filter((key) => key < 99_000).every((key) => key % 10 === 0),
      'only re-used keys are older than the last 1,000 sets',
    ).to.equal(true);
  });
});

describe('boundedMemo', () => {
  it('computes a key once while remembered, never remembers null, and forgets the least recently used past its bound', () => {
    const computed: string[] = [];
    const memo = boundedMemo(2, (key: string) => {
      computed.push(key);
      return key === 'forged' ? null : key.toUpperCase();
    });
    expect(memo('a')).to.equal('A');
    expect(memo('a')).to.equal('A');
    expect(memo('forged')).to.equal(null);
    expect(memo('forged')).to.equal(null);
    memo('b');
    memo('a');
    memo('c');
    memo('a');
    memo('b');
    expect(computed).to.deep.equal(['a', 'forged', 'forged', 'b', 'c', 'b']);
  });
});
