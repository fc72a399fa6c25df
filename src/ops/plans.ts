/**
 * Ops plans, as the API and the chat tool `ops_plan_create` use them: the handler or the tool
 * authorizes, then calls these, which check what a schema cannot, talk to the cluster, write,
 * audit and present.
 *
 * A plan is proposed `pending`, each step with a server-side dry run attached; another user with
 * write on the connector approves it, which runs the steps in order and stops at the first
 * failure (`succeeded` or `failed`); it may instead be `rejected` (by a writer), `cancelled` (by
 * its author), or left to `expire` (OPS_PLAN_TTL_MS), which is noticed when plans are read.
 * Every state change is one conditional UPDATE from the state it leaves, audited in its
 * transaction, so under concurrency exactly one request makes it.
 */
import type { Knex } from 'knex';
import { recordAudit, SYSTEM_ACTOR, type Actor } from '../audit/writer.ts';
import type { Subject } from '../authz/types.ts';
import { findConnectorOrFail } from '../connectors/target.ts';
import type { ConnectorRow } from '../connectors/store.ts';
import { newUid } from '../db/ids.ts';
import { BadRequestError, ConflictError, NotFoundError, ServiceError } from '../errors.ts';
import type { Infer } from '../http/guard.ts';
import type { Services } from '../services.ts';
import { clusterOf, type Cluster } from './cluster.ts';
import { findDuePlanRows, findPlanRow, insertPlanRow, PLAN_STATES, transitionPlan, updatePlanSteps, type PlanRow, type PlanState } from './plans.store.ts';
import { resolveStep, runStep, STEP_KINDS, stepSchema, type Step, type StepInput, type StepKind } from './steps.ts';

export const MAX_STEPS = 20;

/** A plan to propose: the body of `POST /api/connectors/:uid/ops/plans` and the arguments of `ops_plan_create`. */
export const planSchema = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    reason: { type: 'string', minLength: 1, maxLength: 2000 },
    steps: { type: 'array', minItems: 1, maxItems: MAX_STEPS, items: stepSchema },
  },
  required: ['title', 'reason', 'steps'],
  additionalProperties: false,
} as const;

export type PlanInput = Infer<typeof planSchema>;

export const STEP_STATUSES = ['succeeded', 'failed', 'skipped'] as const;

/** A step as kept with its plan: the object it acts on as resolved (`deployments/web` in `shop`), its dry run, its outcome once run. */
interface StoredStep {
  kind: StepKind;
  target: string;
  namespace: string | null;
  replicas?: number;
  toRevision?: number;
  patch?: Record<string, unknown>;
  dryRun: { ok: boolean; message: string };
  outcome: { status: (typeof STEP_STATUSES)[number]; message: string; at: number } | null;
}

const outcomeSchema = {
  type: 'object',
  properties: { status: { enum: [...STEP_STATUSES] }, message: { type: 'string' }, at: { type: 'integer' } },
  required: ['status', 'message', 'at'],
} as const;

const nullableInteger = { type: ['integer', 'null'] } as const;
const nullableText = { type: ['string', 'null'] } as const;

/** What presentPlan sends: times in ms since the epoch. */
export const PLAN_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    connectorUid: { type: 'string' },
    title: { type: 'string' },
    reason: { type: 'string' },
    state: { enum: [...PLAN_STATES] },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          kind: { enum: [...STEP_KINDS] },
          target: { type: 'string' },
          namespace: nullableText,
          replicas: { type: 'integer' },
          toRevision: { type: 'integer' },
          patch: { type: 'object' },
          dryRun: { type: 'object', properties: { ok: { type: 'boolean' }, message: { type: 'string' } }, required: ['ok', 'message'] },
          outcome: { anyOf: [outcomeSchema, { type: 'null' }] },
        },
        required: ['kind', 'target', 'namespace', 'dryRun', 'outcome'],
      },
    },
    createdBy: { type: 'string' },
    created: { type: 'integer' },
    expiresAt: { type: 'integer' },
    decidedBy: nullableText,
    decided: nullableInteger,
    rejectionReason: nullableText,
    finished: nullableInteger,
    failedStep: nullableInteger,
  },
  required: [
    'id',
    'connectorUid',
    'title',
    'reason',
    'state',
    'steps',
    'createdBy',
    'created',
    'expiresAt',
    'decidedBy',
    'decided',
    'rejectionReason',
    'finished',
    'failedStep',
  ],
} as const;

const optionalNumber = (value: number | null) => (value === null ? null : Number(value));

export function presentPlan(row: PlanRow) {
  return {
    id: row.id,
    connectorUid: row.connector_uid,
    title: row.title,
    reason: row.reason,
    state: row.state,
    steps: JSON.parse(row.steps) as StoredStep[],
    createdBy: row.created_by,
    created: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    decidedBy: row.decided_by,
    decided: optionalNumber(row.decided_at),
    rejectionReason: row.rejection_reason,
    finished: optionalNumber(row.finished_at),
    failedStep: optionalNumber(row.failed_step),
  };
}

export type Plan = ReturnType<typeof presentPlan>;

const auditTarget = (plan: Pick<PlanRow, 'id' | 'title'>) => ({ type: 'ops_plan', id: plan.id, name: plan.title });

/** The plan `id` of the org; one of another org is as unknown as a missing one. */
async function findPlanOrFail(db: Knex, orgId: string, id: string): Promise<PlanRow> {
  const plan = await findPlanRow(db, orgId, id);
  if (!plan) throw new NotFoundError(`ops plan ${id} not found`);
  return plan;
}

/** What a step's failure says: the cluster's refusal or the service's own error; anything else is logged and not shown. */
function failureOf(error: unknown, services: Pick<Services, 'logger'>): string {
  if (error instanceof ServiceError) return error.message;
  services.logger.error({ err: error }, 'an ops plan step failed unexpectedly');
  return 'the step failed unexpectedly (the service log has the error)';
}

const storedInput = (step: StoredStep): StepInput => ({
  kind: step.kind,
  target: step.target,
  ...(step.namespace !== null && { namespace: step.namespace }),
  ...(step.replicas !== undefined && { replicas: step.replicas }),
  ...(step.toRevision !== undefined && { toRevision: step.toRevision }),
  ...(step.patch !== undefined && { patch: step.patch }),
});

function storedStep(step: Step, dryRun: StoredStep['dryRun']): StoredStep {
  return {
    kind: step.kind,
    target: `${step.resource.name}/${step.name}`,
    namespace: step.namespace ?? null,
    ...(step.replicas !== undefined && { replicas: step.replicas }),
    ...(step.toRevision !== undefined && { toRevision: step.toRevision }),
    ...(step.patch !== undefined && { patch: step.patch }),
    dryRun,
    outcome: null,
  };
}

function nonBlank(value: string, field: string): string {
  const trimmed = value.trim();
  if (!trimmed) throw new BadRequestError(`${field} must not be blank`);
  return trimmed;
}

/**
 * Proposes a plan on an ops connector (findOpsConnectorOrFail): every step is checked against the
 * allowlists (400, nothing stored) and dry-run on the cluster, one after the other; a failed dry
 * run is attached to its step, for the approver to see. `field` names the input in messages
 * (`body`, `body.args`).
 */
export async function proposePlan(
  services: Services,
  actor: Actor,
  author: Pick<Subject, 'id' | 'kind'>,
  connector: ConnectorRow,
  input: PlanInput,
  field: string,
): Promise<Plan> {
  const title = nonBlank(input.title, `${field}.title`);
  const reason = nonBlank(input.reason, `${field}.reason`);
  const cluster = await clusterOf(connector, services);
  const steps = input.steps.map((step, index) => resolveStep(cluster.settings, step, `${field}.steps.${index}`));
  const now = services.clock.now();
  const stored: StoredStep[] = [];
  for (const step of steps) {
    try {
      stored.push(storedStep(step, { ok: true, message: await runStep(cluster, step, true, now) }));
    } catch (error) {
      stored.push(storedStep(step, { ok: false, message: failureOf(error, services) }));
    }
  }
  const row: PlanRow = {
    org_id: connector.org_id,
    id: newUid(),
    connector_uid: connector.uid,
    title,
    reason,
    state: 'pending',
    steps: JSON.stringify(stored),
    created_by: author.id,
    created_by_kind: author.kind,
    created_at: now,
    expires_at: now + services.config.opsPlanTtlMs,
    decided_by: null,
    decided_at: null,
    rejection_reason: null,
    finished_at: null,
    failed_step: null,
  };
  return services.transact(async (tx) => {
    // the connector may have gone while the cluster answered the dry runs
    await findConnectorOrFail(tx.db, connector.org_id, connector.uid);
    await insertPlanRow(tx, row);
    await recordAudit(
      tx.db,
      actor,
      {
        action: 'ops_plan.created',
        orgId: row.org_id,
        target: auditTarget(row),
        metadata: {
          connectorUid: row.connector_uid,
          steps: stored.length,
          kinds: stored.map((step) => step.kind),
          dryRunFailures: stored.filter((step) => !step.dryRun.ok).length,
          expiresAt: row.expires_at,
        },
      },
      now,
    );
    return presentPlan(row);
  });
}

/**
 * Marks the org's pending plans whose time ran out at `now` (or only plan `id`) expired, each in
 * a conditional UPDATE audited as the system: a plan expires once, whoever notices it first.
 */
export async function expireDuePlans(services: Services, orgId: string, now: number, id?: string): Promise<void> {
  const due = await findDuePlanRows(services.db, orgId, now, id);
  if (due.length === 0) return;
  await services.transact(async (tx) => {
    for (const plan of due) {
      if (!(await transitionPlan(tx, plan, { state: 'pending', expiredAt: now }, { state: 'expired', decided_at: now }))) continue;
      await recordAudit(
        tx.db,
        SYSTEM_ACTOR,
        { action: 'ops_plan.expired', orgId, target: auditTarget(plan), metadata: { connectorUid: plan.connector_uid, expiresAt: Number(plan.expires_at) } },
        now,
      );
    }
  });
}

/** The plan as it is now: a pending plan whose time ran out is expired first. */
export async function currentPlan(services: Services, plan: PlanRow, now: number): Promise<PlanRow> {
  if (plan.state !== 'pending' || Number(plan.expires_at) > now) return plan;
  await expireDuePlans(services, plan.org_id, now, plan.id);
  return findPlanOrFail(services.db, plan.org_id, plan.id);
}

/** 409 saying why a plan cannot be `decided` (after currentPlan: an expired plan says when). */
function notPending(plan: PlanRow, decided: Decision['state']): ConflictError {
  if (plan.state === 'expired') return new ConflictError(`plan ${plan.id} expired at ${new Date(Number(plan.expires_at)).toISOString()}`);
  return new ConflictError(`plan ${plan.id} is ${plan.state}: only a pending plan can be ${decided}`);
}

type Decision = { state: 'approved' } | { state: 'rejected'; reason: string | null } | { state: 'cancelled' };

/** Moves a pending plan to `decision` for `deciderId`, audited; 409 when it is no longer pending (or its time ran out). */
async function decide(services: Services, actor: Actor, plan: PlanRow, deciderId: string, decision: Decision, now: number): Promise<void> {
  const current = await currentPlan(services, plan, now);
  if (current.state !== 'pending') throw notPending(current, decision.state);
  const changes: Partial<PlanRow> = {
    state: decision.state,
    decided_by: deciderId,
    decided_at: now,
    ...(decision.state === 'rejected' && { rejection_reason: decision.reason }),
  };
  const moved = await services.transact(async (tx) => {
    if (!(await transitionPlan(tx, plan, { state: 'pending', notExpiredAt: now }, changes))) return false;
    const metadata = { connectorUid: plan.connector_uid, steps: (JSON.parse(plan.steps) as unknown[]).length };
    await recordAudit(tx.db, actor, { action: `ops_plan.${decision.state}`, orgId: plan.org_id, target: auditTarget(plan), metadata }, now);
    return true;
  });
  // another request moved it first, or its time ran out in between
  if (!moved) throw notPending(await currentPlan(services, await findPlanOrFail(services.db, plan.org_id, plan.id), now), decision.state);
}

export async function rejectPlan(services: Services, actor: Actor, plan: PlanRow, deciderId: string, reason: string | undefined): Promise<Plan> {
  await decide(services, actor, plan, deciderId, { state: 'rejected', reason: reason?.trim() || null }, services.clock.now());
  return presentPlan(await findPlanOrFail(services.db, plan.org_id, plan.id));
}

export async function cancelPlan(services: Services, actor: Actor, plan: PlanRow, deciderId: string): Promise<Plan> {
  await decide(services, actor, plan, deciderId, { state: 'cancelled' }, services.clock.now());
  return presentPlan(await findPlanOrFail(services.db, plan.org_id, plan.id));
}

/**
 * Approves the plan and runs it: its steps in order, each recorded as it ends, stopping at the
 * first failure (the rest `skipped`). The steps are checked against the connector's allowlists
 * as they are now before any runs: one no longer allowed fails the plan with nothing run.
 */
export async function approvePlan(services: Services, actor: Actor, plan: PlanRow, connector: ConnectorRow, approverId: string): Promise<Plan> {
  const cluster = await clusterOf(connector, services);
  await decide(services, actor, plan, approverId, { state: 'approved' }, services.clock.now());
  const steps = JSON.parse(plan.steps) as StoredStep[];
  const failedStep = await runSteps(services, cluster, plan, steps);
  const now = services.clock.now();
  const state: PlanState = failedStep === null ? 'succeeded' : 'failed';
  await services.transact(async (tx) => {
    await transitionPlan(tx, plan, { state: 'approved' }, { state, steps: JSON.stringify(steps), finished_at: now, failed_step: failedStep });
    await recordAudit(
      tx.db,
      actor,
      {
        action: `ops_plan.${state}`,
        orgId: plan.org_id,
        target: auditTarget(plan),
        metadata: {
          connectorUid: plan.connector_uid,
          steps: steps.length,
          succeededSteps: steps.filter((step) => step.outcome?.status === 'succeeded').length,
          ...(failedStep !== null && { failedStep, failedKind: steps[failedStep]!.kind }),
        },
      },
      now,
    );
  });
  return presentPlan(await findPlanOrFail(services.db, plan.org_id, plan.id));
}

/** Runs the steps, filling in their outcomes; the index of the step that failed, or null. */
async function runSteps(services: Services, cluster: Cluster, plan: PlanRow, steps: StoredStep[]): Promise<number | null> {
  const fail = (index: number, message: string, skipped: string) => {
    const at = services.clock.now();
    steps[index]!.outcome = { status: 'failed', message, at };
    for (const step of steps) step.outcome ??= { status: 'skipped', message: skipped, at };
    return index;
  };
  const resolved: Step[] = [];
  for (const [index, step] of steps.entries()) {
    try {
      resolved.push(resolveStep(cluster.settings, storedInput(step), `steps.${index}`));
    } catch (error) {
      return fail(index, `no longer allowed on the connector: ${failureOf(error, services)}`, `not run: step ${index} is no longer allowed`);
    }
  }
  for (const [index, step] of resolved.entries()) {
    try {
      steps[index]!.outcome = { status: 'succeeded', message: await runStep(cluster, step, false, services.clock.now()), at: services.clock.now() };
    } catch (error) {
      return fail(index, failureOf(error, services), `not run: step ${index} failed`);
    }
    await updatePlanSteps(services.db, plan, JSON.stringify(steps));
  }
  return null;
}
