/**
 * Impact analysis of a policy change: a candidate build is evaluated beside the current one on
 * the same inputs and data documents, and every decision that flips is reported with both builds'
 * reasons. The inputs are the decisions the service recorded (the decision log, replayed against
 * the document of each entry's org) and a sweep of an org's document: every principal, every
 * catalogued action, every resource of that action's kind the document names. The CLI
 * (`npm run cli -- policy-diff`) and POST /api/access-control/policy-diff both run it.
 */
import { ACTIONS } from './actions.ts';
import { renderReasons, type Reason } from './reasons.ts';
import type { AuthzInput, Decision, OrgDocument, ResourceRef, Subject } from './types.ts';
import type { PolicyInstance } from './wasm.ts';

/** The kinds scopes.rego names resources of; an action of another kind is swept without a resource. */
const POLICY_KINDS = new Set([
  'dashboards',
  'folders',
  'alert.rules',
  'connectors',
  'teams',
  'users',
  'annotations',
  'alert.silences',
  'apikeys',
  'global.users',
  'investigations',
  'orgs',
  'roles',
  'serviceaccounts',
  'settings',
]);

/** The kind of resource an action's requests name, where it is not the action's own prefix (alert rules are decided on their folder). */
const KIND_OF_PREFIX: Record<string, string> = {
  'dashboards.permissions': 'dashboards',
  'folders.permissions': 'folders',
  'alert.rules': 'folders',
  'alert.rules.permissions': 'folders',
  'connectors.permissions': 'connectors',
  'team.permissions': 'teams',
  'org.users': 'users',
  'orgs.preferences': 'orgs',
  'orgs.quotas': 'orgs',
};

/** The uid of the root folder, where a folder is created without a parent (src/http/resource-uid.ts). */
const ROOT_FOLDER_UID = 'general';

/** How many decisions are evaluated between two looks at the clock and the event loop. */
const EVALUATIONS_PER_TURN = 256;

export interface RecordedDecisions {
  /** The inputs of the entries, each distinct input once, in the order first seen. */
  inputs: AuthzInput[];
  /** Entries read (lines holding a decision-log entry). */
  entries: number;
  /** Lines that hold no decision-log entry (malformed JSON, no input): left out and counted. */
  skipped: number;
  /** Entries not read because the bound was reached. */
  cut: boolean;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a logged input has what the policy needs to decide it again: a subject, an org (or null) and an action. */
function isReplayable(input: unknown): input is AuthzInput {
  if (!isRecord(input) || !isRecord(input.subject) || typeof input.action !== 'string') return false;
  const { subject } = input;
  return typeof subject.id === 'string' && typeof subject.kind === 'string' && (input.org_id === null || typeof input.org_id === 'string');
}

/**
 * The decision log's entries (src/authz/decision-log.ts writes them, one JSON line each), read up
 * to `limit` entries: their inputs, each distinct one once.
 */
export async function readRecordedDecisions(lines: AsyncIterable<string> | Iterable<string>, limit: number): Promise<RecordedDecisions> {
  const seen = new Map<string, AuthzInput>();
  let entries = 0;
  let skipped = 0;
  let cut = false;
  for await (const line of lines) {
    if (!line.trim()) continue;
    if (entries >= limit) {
      cut = true;
      break;
    }
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    const input = isRecord(entry) ? entry.input : undefined;
    if (!isReplayable(input)) {
      skipped++;
      continue;
    }
    entries++;
    const key = JSON.stringify(input);
    if (!seen.has(key)) seen.set(key, input);
  }
  return { inputs: [...seen.values()], entries, skipped, cut };
}

/** A resource reference from a scope a grant names (`folders:uid:f1`, `teams:id:3`); null for wildcards and other shapes. */
function resourceOfScope(scope: string): ResourceRef | null {
  const parts = scope.split(':');
  if (parts.length < 3) return null;
  const [kind, attr] = parts as [string, string];
  const value = parts.slice(2).join(':');
  if (!POLICY_KINDS.has(kind) || value === '' || value === '*') return null;
  if (attr === 'uid') return { kind, uid: value };
  if (attr === 'id') return { kind, id: value };
  return null;
}

const refKey = (ref: ResourceRef) => JSON.stringify(ref);

/** Every resource of each kind the document names: its folders (and the root), dashboards, teams, members, roles, the org, and what role grants scope. */
function resourcesByKind(document: OrgDocument): Map<string, ResourceRef[]> {
  const byKind = new Map<string, Map<string, ResourceRef>>();
  const add = (ref: ResourceRef) => {
    const kind = 'kind' in ref ? ref.kind : '';
    const refs = byKind.get(kind) ?? byKind.set(kind, new Map()).get(kind)!;
    refs.set(refKey(ref), ref);
  };
  add({ kind: 'folders', uid: ROOT_FOLDER_UID });
  for (const uid of Object.keys(document.folders)) add({ kind: 'folders', uid });
  for (const uid of Object.keys(document.dashboards)) add({ kind: 'dashboards', uid });
  for (const id of Object.keys(document.teams)) add({ kind: 'teams', id });
  for (const id of Object.keys(document.members)) add({ kind: 'users', id });
  for (const uid of Object.keys(document.roles)) add({ kind: 'roles', uid });
  for (const uid of Object.keys(document.label_rules)) add({ kind: 'connectors', uid });
  if (document.org_id !== null) add({ kind: 'orgs', id: document.org_id });
  for (const permissions of Object.values(document.roles))
    for (const scopes of Object.values(permissions))
      for (const scope of Object.keys(scopes)) {
        const ref = resourceOfScope(scope);
        if (ref) add(ref);
      }
  return new Map([...byKind].map(([kind, refs]) => [kind, [...refs.values()]]));
}

/** The resources an action is swept on; `[undefined]`: asked once without a resource. */
function resourcesOfAction(action: string, byKind: Map<string, ResourceRef[]>): Array<ResourceRef | undefined> {
  const prefix = action.slice(0, action.indexOf(':'));
  const resources = byKind.get(KIND_OF_PREFIX[prefix] ?? prefix);
  return resources && resources.length > 0 ? resources : [undefined];
}

/** The sweep of an org's document: every subject × catalogued action × resource of the action's kind. */
export interface Sweep {
  orgId: string;
  /** How many inputs the whole sweep holds. */
  size: number;
  inputs(): Generator<AuthzInput>;
}

/**
 * The sweep of `document` for `subjects` (the org's members as the service sees them; without
 * them, each member of the document as an enabled user). Action by action, so that a sweep cut
 * short by its bound has asked every subject of the actions it reached.
 */
export function sweepOf(document: OrgDocument, subjects?: Subject[]): Sweep {
  if (document.org_id === null) throw new Error('a sweep needs an org document');
  const orgId = document.org_id;
  const who = subjects ?? Object.keys(document.members).map((id): Subject => ({ id, kind: 'user', server_admin: false, disabled: false }));
  const byKind = resourcesByKind(document);
  const size = ACTIONS.reduce((total, action) => total + resourcesOfAction(action, byKind).length * who.length, 0);
  return {
    orgId,
    size,
    *inputs() {
      for (const action of ACTIONS)
        for (const resource of resourcesOfAction(action, byKind))
          for (const subject of who) yield resource ? { subject, org_id: orgId, action, resource } : { subject, org_id: orgId, action };
    },
  };
}

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
