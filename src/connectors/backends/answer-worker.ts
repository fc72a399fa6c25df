/** The worker thread of answer-pool.ts: puts query answers together as their chunks come and decodes them off the service's event loop. */
import { parentPort } from 'node:worker_threads';
import { decodeQueryAnswer, type DecodedAnswer, type QueryAnswer } from './answers.ts';

type Message = { id: number } & ({ start: Omit<QueryAnswer, 'chunks'> } | { chunk: ArrayBuffer } | { end: true } | { drop: true });

const answers = new Map<number, QueryAnswer>();

parentPort!.on('message', (message: Message) => {
  const { id } = message;
  if ('start' in message) return void answers.set(id, { ...message.start, chunks: [] });
  const answer = answers.get(id);
  if (!answer) return;
  if ('chunk' in message) return void answer.chunks.push(new Uint8Array(message.chunk));
  answers.delete(id);
  if ('drop' in message) return;
  let decoded: DecodedAnswer;
  try {
    decoded = decodeQueryAnswer(answer);
  } catch {
    // a result too deep or too large for this thread's heap
    decoded = { failure: { status: 502, message: 'backend answer could not be read' } };
  }
  parentPort!.postMessage({ id, decoded }, 'json' in decoded ? [decoded.json.buffer as ArrayBuffer] : []);
});
