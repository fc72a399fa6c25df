/**
 * The worker thread of answer-pool.ts: puts query answers together as their chunks come and decodes
 * them, and merges those of a read sent once per label rule, off the service's event loop.
 */
import { parentPort } from 'node:worker_threads';
import { decodeQueryAnswer, type DecodedAnswer, type QueryAnswer } from './answers.ts';
import { mergeAnswers, type MergeJob } from './loki-union.ts';

type Message = { id: number } & ({ start: Omit<QueryAnswer, 'chunks'> } | { chunk: ArrayBuffer } | { end: true } | { drop: true } | { merge: MergeJob });

const answers = new Map<number, QueryAnswer>();

/** What the worker answers for `work`; a failure to read is the backend's. */
function settle(work: () => DecodedAnswer): DecodedAnswer {
  try {
    return work();
  } catch {
    // a result too deep or too large for this thread's heap
    return { failure: { status: 502, message: 'backend answer could not be read' } };
  }
}

parentPort!.on('message', (message: Message) => {
  const { id } = message;
  let decoded: DecodedAnswer;
  if ('merge' in message) {
    decoded = settle(() => mergeAnswers(message.merge));
  } else {
    if ('start' in message) return void answers.set(id, { ...message.start, chunks: [] });
    const answer = answers.get(id);
    if (!answer) return;
    if ('chunk' in message) return void answer.chunks.push(new Uint8Array(message.chunk));
    answers.delete(id);
    if ('drop' in message) return;
    decoded = settle(() => decodeQueryAnswer(answer));
  }
  parentPort!.postMessage({ id, decoded }, 'json' in decoded ? [decoded.json.buffer as ArrayBuffer] : []);
});
