/**
 * Query answers decoded on worker threads: parsing and reshaping megabytes of JSON takes the
 * event loop for tens of milliseconds an answer, during which no other request of the service is
 * served. A worker gets the answer's chunks as they come (moved, not copied) and gives back the
 * result's JSON the same way, so the event loop only passes bytes; the answers of a read sent once
 * per label rule are merged there too. The threads start on the first query, one per core but one
 * (up to four), and hold the process open only while they have work.
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

/** A chunk's memory, moved when the chunk owns it all (as read from the socket), else a copy of it. */
function ownMemory(chunk: Uint8Array): ArrayBuffer {
  if (chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer) return chunk.buffer;
  return Uint8Array.prototype.slice.call(chunk).buffer as ArrayBuffer;
}

/** Merges the answers of a read sent once per label rule (loki-union.ts) on a worker thread; the parts that own their memory are moved there. */
export function mergeOffThread(merge: MergeJob): Promise<DecodedAnswer> {
  const thread = leastBusy();
  const id = nextId++;
  const movable = merge.parts.filter((part) => part.byteOffset === 0 && part.byteLength === part.buffer.byteLength).map((part) => part.buffer as ArrayBuffer);
  return new Promise((resolve, reject) => {
    thread.pending.set(id, { resolve, reject });
    thread.worker.ref();
    thread.worker.postMessage({ id, merge }, movable);
  });
}

/**
 * Decodes an answer on a worker thread, its body sent there chunk by chunk as it comes: the event
 * loop keeps no answer whole (megabytes that would live long enough to cost full collections of
 * its heap). A body that fails drops what the worker holds of it, and the failure is thrown.
 */
export async function decodeOffThread(answer: Omit<QueryAnswer, 'chunks'>, body: AsyncIterable<Uint8Array>): Promise<DecodedAnswer> {
  const thread = leastBusy();
  const id = nextId++;
  const decoded = new Promise<DecodedAnswer>((resolve, reject) => thread.pending.set(id, { resolve, reject }));
  // a thread lost while the body still comes fails `decoded`, which is awaited at the end
  decoded.catch(() => {});
  thread.worker.ref();
  thread.worker.postMessage({ id, start: answer });
  try {
    for await (const chunk of body) {
      const memory = ownMemory(chunk);
      thread.worker.postMessage({ id, chunk: memory }, [memory]);
    }
  } catch (err) {
    thread.worker.postMessage({ id, drop: true });
    settle(thread, id);
    throw err;
  }
  thread.worker.postMessage({ id, end: true });
  return decoded;
}

/** Forgets a request the worker will not answer. */
function settle(thread: Thread, id: number): void {
  thread.pending.delete(id);
  if (thread.pending.size === 0) thread.worker.unref();
}
