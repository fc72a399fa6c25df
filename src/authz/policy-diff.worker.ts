/**
 * The thread an uploaded candidate is compared in (src/authz/policy-diff-isolated.ts starts it):
 * a build nobody vetted may evaluate one decision without end, and only a thread of its own can
 * be stopped then. It gets everything it compares as data and answers the report.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BadRequestError } from '../errors.ts';
import { loadCandidate } from './policy-candidate.ts';
import { sweepOf } from './policy-diff-inputs.ts';
import { diffPolicies } from './policy-diff.ts';
import type { IsolatedDiffJob } from './policy-diff-isolated.ts';
import { PolicyModule } from './wasm.ts';

const job = workerData as IsolatedDiffJob;
const deadline = performance.now() + job.timeBoundMs;
const documents = new Map(job.documents);

try {
  const [current, candidate] = await Promise.all([PolicyModule.fromBytes(job.currentWasm), loadCandidate(job.candidateWasm, 'the candidate')]);
  const report = await diffPolicies({
    current: () => current.instantiate(),
    candidate: candidate.instantiate,
    documentOf: async (orgId) => {
      const document = documents.get(orgId);
      if (!document) throw new Error(`no document of org ${orgId} was handed over`);
      return document;
    },
    ...(job.recorded && { recorded: job.recorded }),
    ...(job.sweep && { sweep: sweepOf(job.sweep.document, job.sweep.subjects) }),
    ...(job.sweepLimit !== undefined && { sweepLimit: job.sweepLimit }),
    ...(job.maxListedFlips !== undefined && { maxListedFlips: job.maxListedFlips }),
    deadline,
  });
  parentPort!.postMessage({ report });
} catch (err) {
  // a candidate that does not load as a policy build is the uploader's to fix; anything else is a failure
  const refused = err instanceof BadRequestError;
  parentPort!.postMessage(refused ? { refusal: err.message } : { error: (err as Error).message });
}
