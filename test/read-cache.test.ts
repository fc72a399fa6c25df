/**
 * The identity caches' freshness rules (src/db/read-cache.ts), on the cache alone: concurrent
 * misses of one key share one load, and a local write, or forgetting the key, makes the next
 * miss read again rather than join a load that started before it.
 */
import { expect } from 'chai';
import { ReadCache } from '../src/db/read-cache.ts';
import { WriteWatch } from '../src/db/write-watch.ts';

function counter() {
  const releases: Array<() => void> = [];
  let loads = 0;
  const load = () => {
    loads += 1;
    const value = `value ${loads}`;
    return new Promise<string>((resolve) => releases.push(() => resolve(value)));
  };
  return { load, releaseAll: () => releases.splice(0).forEach((release) => release()), loads: () => loads };
}

describe('read cache', () => {
  it('shares one load among the requests that miss the same key meanwhile', async () => {
    const cache = new ReadCache<string>(new WriteWatch({ users: [] }), 1_000);
    const source = counter();
    const answers = [cache.get('u1', 0, source.load), cache.get('u1', 0, source.load), cache.get('u2', 0, source.load)];
    source.releaseAll();
    expect(await Promise.all(answers)).to.deep.equal(['value 1', 'value 1', 'value 2']);
    expect(source.loads()).to.equal(2);
    expect(cache.get('u1', 10, source.load)).to.equal('value 1');
  });

  it('reads again for a request after a local write, and keeps only what was read after it', async () => {
    const watch = new WriteWatch({ users: [] });
    const cache = new ReadCache<string>(watch, 1_000);
    const source = counter();
    const before = cache.get('u1', 0, source.load);
    watch.writeSent();
    const after = cache.get('u1', 0, source.load);
    source.releaseAll();
    expect([await before, await after]).to.deep.equal(['value 1', 'value 2']);
    expect(source.loads()).to.equal(2);
    expect(cache.get('u1', 10, source.load)).to.equal('value 2');
  });

  it('reads again after the key is forgotten', async () => {
    const cache = new ReadCache<string>(new WriteWatch({ users: [] }), 1_000);
    const source = counter();
    const before = cache.get('u1', 0, source.load);
    cache.forget('u1');
    const after = cache.get('u1', 0, source.load);
    source.releaseAll();
    expect([await before, await after]).to.deep.equal(['value 1', 'value 2']);
  });

  it('shares nothing when its time to live is 0 (the cache is off)', async () => {
    const cache = new ReadCache<string>(new WriteWatch({ users: [] }), 0);
    const source = counter();
    const answers = [cache.get('u1', 0, source.load), cache.get('u1', 0, source.load)];
    source.releaseAll();
    expect(await Promise.all(answers)).to.deep.equal(['value 1', 'value 2']);
  });
});
