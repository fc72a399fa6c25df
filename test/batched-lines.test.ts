/**
 * The service's log batching (src/logging/batched-lines.ts): pino's lines reach the sink in
 * batches of at least the threshold, whole and in order, and flush() hands on what is pending.
 */
import { expect } from 'chai';
import pino from 'pino';
import { BatchedLines } from '../src/logging/batched-lines.ts';

describe('batched log lines', () => {
  it('writes whole lines, in order, once a batch reaches its size, and what is pending on flush()', () => {
    const writes: string[] = [];
    const batched = new BatchedLines({ write: (text) => writes.push(text) }, 300);
    const logger = pino({ base: null, timestamp: false }, batched);

    logger.info({ n: 1 }, 'first');
    logger.info({ n: 2 }, 'second');
    expect(writes, 'under the threshold nothing is written').to.deep.equal([]);
    for (let n = 3; n <= 10; n += 1) logger.info({ n }, 'more');
    expect(writes.length).to.be.greaterThan(0);
    expect(writes.every((text) => text.length >= 300 && text.endsWith('\n'))).to.equal(true);

    batched.flush();
    const written = writes.length;
    batched.flush();
    expect(writes.length, 'a second flush has nothing to write').to.equal(written);
    const lines = writes
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { n: number; msg: string });
    expect(lines.map((line) => line.n)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(lines[0]!.msg).to.equal('first');
  });
});
