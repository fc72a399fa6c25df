/**
 * Impact analysis of a policy change: a candidate build is evaluated beside the current one on
 * the same inputs and data documents, and every decision that flips is reported with both builds'
 * reasons. The inputs are the decisions the service recorded (the decision log, replayed against
 * the document of each entry's org) and a sweep of an org's document: every principal, every
 * catalogued action, every resource of that action's kind the document names. The CLI
 * (`npm run cli -- policy-diff`) and POST /api/access-control/policy-diff both run it.
 */
import { renderReasons, type Reason } from './reasons.ts';
import type { RecordedDecisions, Sweep } from './policy-diff-inputs.ts';
import type { AuthzInput, Decision, OrgDocument, ResourceRef } from './types.ts';
import type { PolicyInstance } from './wasm.ts';

/** How many decisions are evaluated between two looks at the clock and the event loop. */
const EVALUATIONS_PER_TURN = 256;

/** A decision as a flip shows it: the outcome, the reasons in English and as data. */
export interface ShownDecision {
  allow: boolean;
  reasons: string[];
  reasonDetails: Reason[];
}

export type FlipDirection = 'allow-to-deny' | 'deny-to-allow';

export interface PolicyFlip {
  source: 'decision-log' | 'sweep';
  direction: FlipDirection;
  orgId: string | null;
  principal: { id: string; kind: string; serverAdmin: boolean };
  action: string;
  resource: ResourceRef | null;
  current: ShownDecision;
  candidate: ShownDecision;
}

export interface PolicyDiffReport {
  /** Decisions evaluated on both builds. */
  compared: number;
  allowToDeny: number;
  denyToAllow: number;
  decisionLog: { compared: number; entries: number; skipped: number; cut: boolean } | null;
  sweep: { orgId: string; compared: number; size: number; cut: boolean } | null;
  /** false when the time bound stopped the comparison before every input was evaluated. */
  complete: boolean;
  flips: PolicyFlip[];
  /** Flips counted but not listed (past `maxListedFlips`). */
  flipsNotListed: number;
  /** How long the comparison took, documents and instances included. */
  elapsedMs: number;
}

export interface PolicyDiffRequest {
  current: () => Promise<PolicyInstance>;
  candidate: () => Promise<PolicyInstance>;
  /** The data document of an org (null: the server-level one), as the service builds it. */
  documentOf: (orgId: string | null) => Promise<OrgDocument>;
  recorded?: RecordedDecisions;
  sweep?: Sweep;
  /** How many sweep inputs are evaluated at most. */
  sweepLimit?: number;
  /** performance.now() past which no more decisions are evaluated. */
  deadline?: number;
  maxListedFlips?: number;
}

/** A build's decision; one that fails (a trap, no decision) is a refusal with the reason `error`, as authorize() fails closed. */
function decide(instance: PolicyInstance, input: AuthzInput): Decision {
  try {
    const result = instance.evaluate('authz/decision', input) as Decision | undefined;
    if (result && typeof result.allow === 'boolean' && Array.isArray(result.reasons)) return result;
  } catch {
    // fails closed below
  }
  return { allow: false, reasons: [{ kind: 'error' }] };
}

const shown = (decision: Decision): ShownDecision => ({
  allow: decision.allow,
  reasons: renderReasons(decision.reasons),
  reasonDetails: decision.reasons,
});

/** Compares the candidate with the current build on the recorded decisions, then on the sweep. */
export async function diffPolicies(request: PolicyDiffRequest): Promise<PolicyDiffReport> {
  const started = performance.now();
  const [current, candidate] = await Promise.all([request.current(), request.candidate()]);
  const maxListed = request.maxListedFlips ?? Number.POSITIVE_INFINITY;
  const report: PolicyDiffReport = {
    compared: 0,
    allowToDeny: 0,
    denyToAllow: 0,
    decisionLog: null,
    sweep: null,
    complete: true,
    flips: [],
    flipsNotListed: 0,
    elapsedMs: 0,
  };
  let loadedOrg: string | null | undefined;
  const load = async (orgId: string | null) => {
    if (loadedOrg === orgId) return;
    const document = await request.documentOf(orgId);
    current.setData(document);
    candidate.setData(document);
    loadedOrg = orgId;
  };
  /** Evaluates one input on both builds; false when the time bound is past. */
  const compare = async (input: AuthzInput, source: PolicyFlip['source']): Promise<boolean> => {
    if (report.compared % EVALUATIONS_PER_TURN === 0 && report.compared > 0) {
      // lets other requests in between, and looks at the clock
      await new Promise((resolve) => setImmediate(resolve));
      if (request.deadline !== undefined && performance.now() > request.deadline) return false;
    }
    const before = decide(current, input);
    const after = decide(candidate, input);
    report.compared++;
    if (before.allow === after.allow) return true;
    const direction: FlipDirection = before.allow ? 'allow-to-deny' : 'deny-to-allow';
    if (direction === 'allow-to-deny') report.allowToDeny++;
    else report.denyToAllow++;
    if (report.flips.length >= maxListed) {
      report.flipsNotListed++;
      return true;
    }
    report.flips.push({
      source,
      direction,
      orgId: input.org_id,
      principal: { id: input.subject.id, kind: input.subject.kind, serverAdmin: input.subject.server_admin === true },
      action: input.action,
      resource: input.resource ?? null,
      current: shown(before),
      candidate: shown(after),
    });
    return true;
  };

  if (request.recorded) {
    const { recorded } = request;
    report.decisionLog = { compared: 0, entries: recorded.entries, skipped: recorded.skipped, cut: recorded.cut };
    // org by org, so that each org's document is built and loaded once
    const byOrg = new Map<string | null, AuthzInput[]>();
    for (const input of recorded.inputs) (byOrg.get(input.org_id) ?? byOrg.set(input.org_id, []).get(input.org_id)!).push(input);
    outer: for (const [orgId, inputs] of byOrg) {
      await load(orgId);
      for (const input of inputs) {
        if (!(await compare(input, 'decision-log'))) {
          report.complete = false;
          break outer;
        }
        report.decisionLog.compared++;
      }
    }
  }

  if (request.sweep && report.complete) {
    const { sweep } = request;
    const limit = request.sweepLimit ?? Number.POSITIVE_INFINITY;
    report.sweep = { orgId: sweep.orgId, compared: 0, size: sweep.size, cut: sweep.size > limit };
    await load(sweep.orgId);
    for (const input of sweep.inputs()) {
      if (report.sweep.compared >= limit) break;
      if (!(await compare(input, 'sweep'))) {
        report.complete = false;
        break;
      }
      report.sweep.compared++;
    }
  }
  report.elapsedMs = Math.round(performance.now() - started);
  return report;
}

const ARROW: Record<FlipDirection, string> = { 'allow-to-deny': 'allow -> deny', 'deny-to-allow': 'deny -> allow' };

const resourceText = (ref: ResourceRef | null) =>
  ref === null ? '(no resource)' : 'scope' in ref ? ref.scope : 'uid' in ref ? `${ref.kind}:uid:${ref.uid}` : `${ref.kind}:id:${ref.id}`;

/** The report as an auditor reads it at a terminal: what was compared, the counts, then each flip with both builds' reasons. */
export function renderPolicyDiff(report: PolicyDiffReport, candidateName: string): string {
  const lines = [`policy diff: ${candidateName} against the current build`];
  const log = report.decisionLog;
  if (log) {
    const skipped = log.skipped > 0 ? `, ${log.skipped} lines skipped (no decision-log entry)` : '';
    const cut = log.cut ? ' (the bound cut the log: later entries were not read)' : '';
    lines.push(`decision log: ${log.compared} distinct decisions compared of ${log.entries} entries${skipped}${cut}`);
  }
  const sweep = report.sweep;
  if (sweep) {
    const cut = sweep.cut ? ` (the sweep limit cut the sweep: ${sweep.size - sweep.compared} not evaluated)` : '';
    lines.push(`sweep of org ${sweep.orgId}: ${sweep.compared} of ${sweep.size} decisions compared${cut}`);
  }
  if (!report.complete) lines.push('the time bound stopped the comparison before every decision was evaluated');
  lines.push(
    `decisions compared: ${report.compared} in ${report.elapsedMs} ms; flips: allow -> deny ${report.allowToDeny}, deny -> allow ${report.denyToAllow}`,
  );
  for (const flip of report.flips) {
    const org = flip.orgId === null ? 'server level' : `org ${flip.orgId}`;
    lines.push('');
    lines.push(
      `${ARROW[flip.direction]}: ${flip.principal.kind} ${flip.principal.id} ${flip.action} on ${resourceText(flip.resource)} in ${org} (${flip.source})`,
    );
    for (const [name, decision] of [
      ['current', flip.current],
      ['candidate', flip.candidate],
    ] as const) {
      lines.push(`  ${name}: ${decision.allow ? 'allowed' : 'denied'}`);
      for (const reason of decision.reasons) lines.push(`    - ${reason}`);
    }
  }
  if (report.flipsNotListed > 0) lines.push('', `and ${report.flipsNotListed} more flips not listed`);
  return lines.join('\n');
}
