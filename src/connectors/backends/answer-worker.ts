/** The worker thread of answer-pool.ts: decodes query answers off the service's event loop. */
import { parentPort } from 'node:worker_threads';
import { decodeQueryAnswer, type DecodedAnswer, type QueryAnswer } from './answers.ts';

parentPort!.on('message', ({ id, answer }: { id: number; answer: QueryAnswer }) => {
  let decoded: DecodedAnswer;
  try {
    decoded = decodeQueryAnswer(answer);
  } catch {
    // a result too deep or too large for this thread's heap
    decoded = { failure: { status: 502, message: 'backend answer could not be read' } };
  }
  parentPort!.postMessage({ id, decoded }, 'json' in decoded ? [decoded.json.buffer as ArrayBuffer] : []);
});
