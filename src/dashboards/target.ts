/** What the dashboard routes share: the policy target, the lookup, the audit target. */
import type { Knex } from 'knex';
import type { ResourceRef } from '../authz/types.ts';
import { NotFoundError } from '../errors.ts';
import { findDashboard, type DashboardRow } from './store.ts';

/** A dashboard as a policy target: its candidate scopes include its folder's chain. */
export const dashboardResource = (uid: string): ResourceRef => ({ kind: 'dashboards', uid });

export const dashboardAuditTarget = (dashboard: { uid: string; title: string }) => ({ type: 'dashboard', id: dashboard.uid, name: dashboard.title });

/** The dashboard in the active org (one of another org is as unknown as a missing one); call it after authorize(). */
export async function findDashboardOrFail(db: Knex, orgId: string, uid: string, lock = false): Promise<DashboardRow> {
  const dashboard = await findDashboard(db, orgId, uid, lock);
  if (!dashboard) throw new NotFoundError(`dashboard ${uid} not found`);
  return dashboard;
}
