/**
 * POST /api/access-control/policy-diff: what changes if a candidate policy build is merged,
 * asked of the running service (src/authz/policy-diff.ts compares; the CLI's policy-diff runs
 * the same on a directory of Rego too). The candidate is an uploaded build, so it runs bounded:
 * its size, its memory (src/authz/policy-candidate.ts), how many decisions it is asked, and how
 * long the comparison may take, in a thread of its own that is stopped when a decision does not
 * end (src/authz/policy-diff-isolated.ts).
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { recordAudit } from '../audit/writer.ts';
import { compileCandidate } from '../authz/policy-candidate.ts';
import { diffInWorker, type IsolatedDiffJob } from '../authz/policy-diff-isolated.ts';
import { readRecordedDecisions, type RecordedDecisions } from '../authz/policy-diff-inputs.ts';
import { REASON_SCHEMA } from '../authz/reasons.ts';
import { BadRequestError, NotFoundError, PayloadTooLargeError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { findOrgById } from '../orgs/store.ts';
import { findOrgMemberUsers } from './policy.store.ts';
import { subjectOfUser } from './roles.ts';

/** The largest candidate accepted, decoded (a build is about 230 KB; its base64 must fit BODY_LIMIT_BYTES too). */
const MAX_CANDIDATE_BYTES = 512 * 1024;
/** How many sweep decisions are compared when the request names no limit, and at most. */
const DEFAULT_SWEEP_LIMIT = 20_000;
const MAX_SWEEP_LIMIT = 100_000;
/** How many decision-log entries are read at most. */
const MAX_LOGGED_DECISIONS = 20_000;
/** How long the comparison may evaluate; past it the answer says it is incomplete. */
const TIME_BOUND_MS = 10_000;
/** How many flips the answer lists; the counts include every one. */
const MAX_LISTED_FLIPS = 1_000;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const text = { type: 'string' } as const;
const count = { type: 'integer', minimum: 0 } as const;
const resourceSchema = {
  type: ['object', 'null'],
  properties: { kind: text, uid: text, id: text, scope: text },
} as const;
const shownDecisionSchema = {
  type: 'object',
  properties: { allow: { type: 'boolean' }, reasons: { type: 'array', items: text }, reasonDetails: { type: 'array', items: REASON_SCHEMA } },
  required: ['allow', 'reasons', 'reasonDetails'],
} as const;

const REPORT_SCHEMA = {
  type: 'object',
  properties: {
    compared: count,
    allowToDeny: count,
    denyToAllow: count,
    decisionLog: {
      type: ['object', 'null'],
      properties: { compared: count, entries: count, skipped: count, cut: { type: 'boolean' } },
      required: ['compared', 'entries', 'skipped', 'cut'],
    },
    sweep: {
      type: ['object', 'null'],
      properties: { orgId: text, compared: count, size: count, cut: { type: 'boolean' } },
      required: ['orgId', 'compared', 'size', 'cut'],
    },
    complete: { type: 'boolean', description: `false when the time bound (${TIME_BOUND_MS} ms) stopped the comparison` },
    flips: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          source: { enum: ['decision-log', 'sweep'] },
          direction: { enum: ['allow-to-deny', 'deny-to-allow'] },
          orgId: { type: ['string', 'null'] },
          principal: {
            type: 'object',
            properties: { id: text, kind: text, serverAdmin: { type: 'boolean' } },
            required: ['id', 'kind', 'serverAdmin'],
          },
          action: text,
          resource: resourceSchema,
          current: shownDecisionSchema,
          candidate: shownDecisionSchema,
        },
        required: ['source', 'direction', 'orgId', 'principal', 'action', 'resource', 'current', 'candidate'],
      },
    },
    flipsNotListed: count,
    elapsedMs: count,
  },
  required: ['compared', 'allowToDeny', 'denyToAllow', 'decisionLog', 'sweep', 'complete', 'flips', 'flipsNotListed', 'elapsedMs'],
} as const;

/** The decision log's entries when the service writes one to a file (DECISION_LOG=file). */
async function recordedDecisions(file: string): Promise<RecordedDecisions | undefined> {
  if (!existsSync(file)) return undefined;
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  try {
    return await readRecordedDecisions(lines, MAX_LOGGED_DECISIONS);
  } finally {
    lines.close();
  }
}

export const policyDiffRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/access-control/policy-diff',
    access: 'authenticated',
    level: 'server',
    body: {
      type: 'object',
      properties: {
        candidate: {
          type: 'string',
          minLength: 1,
          description: `The candidate build, base64: a policy .wasm or an opa build bundle (.tar.gz), at most ${MAX_CANDIDATE_BYTES} bytes decoded`,
        },
        orgId: {
          type: 'string',
          minLength: 1,
          description: "The org whose document is swept: every member x catalogued action x resource of the action's kind",
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_SWEEP_LIMIT,
          description: `How many sweep decisions are compared at most (default ${DEFAULT_SWEEP_LIMIT})`,
        },
        decisionLog: { type: 'boolean', description: 'Replay the decision log (DECISION_LOG=file) too; default true' },
      },
      required: ['candidate'],
      additionalProperties: false,
    },
    summary:
      'Compares a candidate policy build with the current one: every decision of the decision log and of an org sweep that flips, with both reasons (server admin).',
    responses: { 200: REPORT_SCHEMA },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('policy.diff:run');
      // base64 holds 3 bytes in 4 characters
      if (body.candidate.length > Math.ceil(MAX_CANDIDATE_BYTES / 3) * 4)
        throw new PayloadTooLargeError(`the candidate is larger than ${MAX_CANDIDATE_BYTES} bytes`);
      if (!BASE64.test(body.candidate) || body.candidate.length % 4 !== 0) throw new BadRequestError('candidate must be base64');
      const bytes = Buffer.from(body.candidate, 'base64');
      await compileCandidate(bytes, 'the candidate');

      let sweep: IsolatedDiffJob['sweep'];
      if (body.orgId !== undefined) {
        if (!(await findOrgById(services.db, body.orgId))) throw new NotFoundError(`org ${body.orgId} not found`);
        const [document, members] = await Promise.all([services.engine.document(body.orgId), findOrgMemberUsers(services.db, body.orgId)]);
        sweep = { document, subjects: members.map(subjectOfUser) };
      }
      const { decisionLog } = services.config;
      const recorded = body.decisionLog !== false && decisionLog?.target === 'file' ? await recordedDecisions(decisionLog.path) : undefined;
      if (!sweep && !recorded) throw new BadRequestError('nothing to compare: name an orgId to sweep (the decision log is off, empty or not asked for)');

      // the documents of every org compared, handed to the comparison's thread
      const orgIds = new Set<string | null>(recorded?.inputs.map((input) => input.org_id));
      if (sweep) orgIds.delete(body.orgId!);
      const documents: IsolatedDiffJob['documents'] = await Promise.all(
        [...orgIds].map(async (orgId) => [orgId, await services.engine.document(orgId)] as const),
      );
      if (sweep) documents.push([body.orgId!, sweep.document]);
      const report = await diffInWorker({
        currentWasm: await readFile(services.config.policyWasmPath),
        candidateWasm: bytes,
        documents,
        ...(recorded && { recorded }),
        ...(sweep && { sweep }),
        sweepLimit: body.limit ?? DEFAULT_SWEEP_LIMIT,
        maxListedFlips: MAX_LISTED_FLIPS,
        timeBoundMs: TIME_BOUND_MS,
      });
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      await recordAudit(
        services.db,
        actorOf(ctx, principal),
        {
          action: 'policy.diff_run',
          orgId: body.orgId ?? null,
          target: { type: 'policy-build', id: sha256 },
          metadata: { compared: report.compared, allowToDeny: report.allowToDeny, denyToAllow: report.denyToAllow, complete: report.complete },
        },
        services.clock.now(),
      );
      ctx.body = report;
    },
  });
};
