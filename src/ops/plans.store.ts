/**
 * SQL of ops plans. A plan belongs to one connector of one org; its steps (with their dry runs
 * and outcomes) are stored as JSON text. A state change is a conditional UPDATE from the state
 * it leaves, so of two requests racing for the same change exactly one sees its row changed.
 */
import type { Knex } from 'knex';
import { findPage, type PageWindow } from '../db/search.ts';
import type { Tx } from '../db/transaction.ts';

export const PLAN_STATES = ['pending', 'approved', 'succeeded', 'failed', 'rejected', 'cancelled', 'expired'] as const;
export type PlanState = (typeof PLAN_STATES)[number];

export interface PlanRow {
  org_id: string;
  id: string;
  connector_uid: string;
  title: string;
  reason: string;
  state: PlanState;
  steps: string;
  created_by: string;
  /** `user` or `service_account`: the author's kind, which the authorship rule compares too. */
  created_by_kind: string;
  created_at: number;
  expires_at: number;
  /** Who approved, rejected or cancelled it (null while pending, and for an expired plan). */
  decided_by: string | null;
  decided_at: number | null;
  rejection_reason: string | null;
  finished_at: number | null;
  failed_step: number | null;
}

const PLAN_COLUMNS = [
  'org_id',
  'id',
  'connector_uid',
  'title',
  'reason',
  'state',
  'steps',
  'created_by',
  'created_by_kind',
  'created_at',
  'expires_at',
  'decided_by',
  'decided_at',
  'rejection_reason',
  'finished_at',
  'failed_step',
] as const;

export interface PlanFilter {
  state?: PlanState;
  connectorUid?: string;
}

export async function insertPlanRow(tx: Tx, row: PlanRow): Promise<void> {
  await tx.db('ops_plans').insert(row);
}

export async function findPlanRow(db: Knex, orgId: string, id: string): Promise<PlanRow | undefined> {
  return db('ops_plans')
    .where({ org_id: orgId, id })
    .first(...PLAN_COLUMNS);
}

/** The pending plans of the org (or the one plan `id`) whose time ran out at `now`. */
export async function findDuePlanRows(db: Knex, orgId: string, now: number, id?: string): Promise<PlanRow[]> {
  const query = db('ops_plans').where({ org_id: orgId, state: 'pending' }).where('expires_at', '<=', now);
  if (id !== undefined) query.where('id', id);
  return query.select(...PLAN_COLUMNS);
}

function filtered(db: Knex, orgId: string, filter: PlanFilter): Knex.QueryBuilder {
  const query = db('ops_plans').where('org_id', orgId);
  if (filter.state) query.where('state', filter.state);
  if (filter.connectorUid) query.where('connector_uid', filter.connectorUid);
  return query;
}

/** The connectors that have plans matching the filter: what a list asks the policy about. */
export async function findPlanConnectorUids(db: Knex, orgId: string, filter: PlanFilter): Promise<string[]> {
  return filtered(db, orgId, filter).distinct('connector_uid').orderBy('connector_uid').pluck('connector_uid');
}

/** One page of the plans matching the filter on the given connectors, newest first, and how many match. */
export async function findPlanPage(
  db: Knex,
  orgId: string,
  filter: PlanFilter,
  connectorUids: string[],
  window: PageWindow,
): Promise<{ totalCount: number; rows: PlanRow[] }> {
  if (connectorUids.length === 0) return { totalCount: 0, rows: [] };
  return findPage<PlanRow>(
    () =>
      filtered(db, orgId, filter)
        .whereIn('connector_uid', connectorUids)
        .select(...PLAN_COLUMNS),
    [
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ],
    window,
  );
}

/** Which plans a transition may leave: pending ones, still within their time or already past it. */
export type From = { state: 'pending'; notExpiredAt: number } | { state: 'pending'; expiredAt: number } | { state: 'approved' };

/** Moves the plan out of `from` with `changes`; false when it is no longer there (another request moved it first). */
export async function transitionPlan(tx: Tx, plan: Pick<PlanRow, 'org_id' | 'id'>, from: From, changes: Partial<PlanRow>): Promise<boolean> {
  const query = tx.db('ops_plans').where({ org_id: plan.org_id, id: plan.id, state: from.state });
  if ('notExpiredAt' in from) query.where('expires_at', '>', from.notExpiredAt);
  if ('expiredAt' in from) query.where('expires_at', '<=', from.expiredAt);
  return (await query.update(changes)) > 0;
}

/** Records the steps' outcomes so far, while an approved plan runs. */
export async function updatePlanSteps(db: Knex, plan: Pick<PlanRow, 'org_id' | 'id'>, steps: string): Promise<void> {
  await db('ops_plans').where({ org_id: plan.org_id, id: plan.id, state: 'approved' }).update({ steps });
}

/** Every plan of the connector: part of deleting it. */
export async function deletePlanRows(tx: Tx, orgId: string, connectorUid: string): Promise<void> {
  await tx.db('ops_plans').where({ org_id: orgId, connector_uid: connectorUid }).delete();
}
