/**
 * A policy diff of an uploaded candidate, run in a worker thread (policy-diff.worker.ts). The
 * comparison stops itself at the time bound between two decisions (the report then says it is
 * not complete); a candidate that does not finish one decision is stopped with its thread once the
 * bound and a grace period are past, and refused.
 */
import { Worker } from 'node:worker_threads';
import { BadRequestError } from '../errors.ts';
import type { RecordedDecisions } from './policy-diff-inputs.ts';
import type { PolicyDiffReport } from './policy-diff.ts';
import type { OrgDocument, Subject } from './types.ts';

export interface IsolatedDiffJob {
  currentWasm: Uint8Array;
  /** The candidate as uploaded (a .wasm or a bundle), compiled once already (compileCandidate). */
  candidateWasm: Uint8Array;
  /** The data document of every org the recorded decisions and the sweep name. */
  documents: Array<[string | null, OrgDocument]>;
  recorded?: RecordedDecisions;
  sweep?: { document: OrgDocument; subjects: Subject[] };
  sweepLimit?: number;
  maxListedFlips?: number;
  /** How long the comparison evaluates, from the thread's start. */
  timeBoundMs: number;
}

/** Beyond the time bound: the thread's start (it loads TypeScript) and the decision under way. */
export const GRACE_MS = 15_000;

/** The JavaScript heap of the thread (the reports it builds), in MiB; the wasm memories are capped on their own. */
const WORKER_HEAP_MB = 256;

// The service runs its TypeScript through tsx, which a worker thread does not inherit: the thread
// registers it before it imports the worker module.
const TSX_API = import.meta.resolve('tsx/esm/api');
const WORKER_MODULE = new URL('./policy-diff.worker.ts', import.meta.url).href;
const BOOTSTRAP = `import(${JSON.stringify(TSX_API)}).then(({ register }) => { register(); return import(${JSON.stringify(WORKER_MODULE)}); });`;

export function diffInWorker(job: IsolatedDiffJob, graceMs = GRACE_MS): Promise<PolicyDiffReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(BOOTSTRAP, { eval: true, execArgv: [], workerData: job, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    let settled = false;
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      finish();
    };
    const timer = setTimeout(
      () =>
        settle(() =>
          reject(new BadRequestError(`the candidate was stopped: it did not finish a decision within the time bound (${job.timeBoundMs + graceMs} ms)`)),
        ),
      job.timeBoundMs + graceMs,
    );
    worker.on('message', (message: { report?: PolicyDiffReport; refusal?: string; error?: string }) =>
      settle(() => {
        if (message.report) resolve(message.report);
        else if (message.refusal !== undefined) reject(new BadRequestError(message.refusal));
        else reject(new Error(`policy diff failed: ${message.error}`));
      }),
    );
    worker.on('error', (err) => settle(() => reject(err)));
    worker.on('exit', (code) => settle(() => reject(new Error(`the policy diff thread exited with ${code}`))));
  });
}
