/**
 * Query answers decoded on worker threads: parsing and reshaping megabytes of JSON takes the
 * event loop for tens of milliseconds an answer, during which no other request of the service is
 * served. A worker gets the answer's chunks (moved, not copied) and gives back the result's JSON
 * the same way, so the event loop only passes bytes. The threads start on the first query, one
 * per core but one (up to four), and hold the process open only while they have work.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { DecodedAnswer, QueryAnswer } from './answers.ts';
import type { MergeJob } from './loki-union.ts';

const WORKER_URL = new URL('./answer-worker.ts', import.meta.url);
/** The service runs its TypeScript through tsx's loader, which Node 20 does not hand on to a worker thread: the worker registers it first. */
const WORKER_BOOTSTRAP = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => {
  register();
  return import(${JSON.stringify(WORKER_URL.href)});
});`;
const THREADS = Math.max(1, Math.min(4, os.availableParallelism() - 1));

interface Pending {
  resolve(decoded: DecodedAnswer): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
}

const threads: Thread[] = [];
let nextId = 0;

function startThread(): Thread {
  const worker = new Worker(WORKER_BOOTSTRAP, { eval: true });
  const thread: Thread = { worker, pending: new Map() };
  worker.unref();
  worker.on('message', ({ id, decoded }: { id: number; decoded: DecodedAnswer }) => {
    thread.pending.get(id)?.resolve(decoded);
    thread.pending.delete(id);
    if (thread.pending.size === 0) worker.unref();
  });
  const lost = (error: Error) => {
    threads.splice(threads.indexOf(thread), 1);
    for (const pending of thread.pending.values()) pending.reject(error);
    thread.pending.clear();
  };
  worker.on('error', lost);
  worker.on('exit', (code) => threads.includes(thread) && lost(new Error(`the answer decoding thread exited with ${code}`)));
  threads.push(thread);
  return thread;
}

/** The thread with the least work, or a new one while there are fewer than THREADS. */
function leastBusy(): Thread {
  const idle = threads.find((thread) => thread.pending.size === 0);
  if (idle) return idle;
  if (threads.length < THREADS) return startThread();
  return threads.reduce((least, thread) => (thread.pending.size < least.pending.size ? thread : least));
}

/** The buffers of `chunks` that own their memory (as read from the socket): moved to the thread, the others copied. */
const movableOf = (chunks: readonly Uint8Array[]) =>
  chunks.filter((chunk) => chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength).map((chunk) => chunk.buffer as ArrayBuffer);

function post(work: { answer: QueryAnswer } | { merge: MergeJob }, movable: ArrayBuffer[]): Promise<DecodedAnswer> {
  const thread = leastBusy();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    thread.pending.set(id, { resolve, reject });
    thread.worker.ref();
    thread.worker.postMessage({ id, ...work }, movable);
  });
}

/** Decodes `answer` on a worker thread. */
export const decodeOffThread = (answer: QueryAnswer): Promise<DecodedAnswer> => post({ answer }, movableOf(answer.chunks));

/** Merges the answers of a read sent once per label rule (loki-union.ts) on a worker thread. */
export const mergeOffThread = (merge: MergeJob): Promise<DecodedAnswer> => post({ merge }, movableOf(merge.parts));
