/** The worker thread of answer-pool.ts: decodes query answers, and merges those of a read sent once per label rule, off the service's event loop. */
import { parentPort } from 'node:worker_threads';
import { decodeQueryAnswer, type DecodedAnswer, type QueryAnswer } from './answers.ts';
import { mergeAnswers, type MergeJob } from './loki-union.ts';

parentPort!.on('message', ({ id, answer, merge }: { id: number; answer?: QueryAnswer; merge?: MergeJob }) => {
  let decoded: DecodedAnswer;
  try {
    decoded = merge ? mergeAnswers(merge) : decodeQueryAnswer(answer!);
  } catch {
    // a result too deep or too large for this thread's heap
    decoded = { failure: { status: 502, message: 'backend answer could not be read' } };
  }
  parentPort!.postMessage({ id, decoded }, 'json' in decoded ? [decoded.json.buffer as ArrayBuffer] : []);
});
