/**
 * SQL of dashboards. A dashboard lives in one folder of its org (null = the root) and keeps its
 * model as JSON with a version that every save bumps. Writes report the policy's `dashboard`
 * fragment (its folder, which its grants inherit from).
 */
import type { Knex } from 'knex';
import { dialectOf } from '../db/knex.ts';
import { removeGrantsOnResources } from '../accesscontrol/grants.ts';
import { whereContains, whereInFolders, type FolderFilter } from '../db/search.ts';
import type { Tx } from '../db/transaction.ts';

export interface DashboardRow {
  org_id: string;
  uid: string;
  title: string;
  folder_uid: string | null;
  data: string | null;
  version: number;
  created_at: number;
  updated_at: number;
  created_by: string | null;
  updated_by: string | null;
}

/** What a save writes: the model without the fields kept in columns. */
export interface DashboardContent {
  title: string;
  folderUid: string | null;
  model: Record<string, unknown>;
}

const DASHBOARD_COLUMNS = ['org_id', 'uid', 'title', 'folder_uid', 'data', 'version', 'created_at', 'updated_at', 'created_by', 'updated_by'] as const;

/** `lock`: on MySQL the row stays locked until the transaction ends (writers of its grants take turns). */
export async function findDashboard(db: Knex, orgId: string, uid: string, lock = false): Promise<DashboardRow | undefined> {
  const query = db('dashboards').where({ org_id: orgId, uid });
  if (lock && dialectOf(db) === 'mysql') query.forUpdate();
  return query.first(...DASHBOARD_COLUMNS);
}

/** The dashboard of the folder (null: the root) with this title, ignoring case, as Grafana compares them. */
export async function findDashboardByTitle(db: Knex, orgId: string, folderUid: string | null, title: string): Promise<DashboardRow | undefined> {
  const query = db('dashboards').where('org_id', orgId).whereRaw('LOWER(title) = ?', [title.toLowerCase()]);
  if (folderUid) query.where('folder_uid', folderUid);
  else query.whereNull('folder_uid');
  return query.first(...DASHBOARD_COLUMNS);
}

export async function insertDashboard(tx: Tx, orgId: string, uid: string, content: DashboardContent, createdBy: string, now: number): Promise<void> {
  await tx.db('dashboards').insert({
    org_id: orgId,
    uid,
    title: content.title,
    folder_uid: content.folderUid,
    data: JSON.stringify(content.model),
    version: 1,
    created_at: now,
    updated_at: now,
    created_by: createdBy,
    updated_by: createdBy,
  });
  tx.policyChanged(orgId, { kind: 'dashboard', uid });
}

/** Replaces the dashboard's content as its next version; its grants stay. */
export async function updateDashboard(tx: Tx, current: DashboardRow, content: DashboardContent, updatedBy: string, now: number): Promise<void> {
  await tx
    .db('dashboards')
    .where({ org_id: current.org_id, uid: current.uid })
    .update({
      title: content.title,
      folder_uid: content.folderUid,
      data: JSON.stringify(content.model),
      version: current.version + 1,
      updated_by: updatedBy,
      updated_at: now,
    });
  if (content.folderUid !== current.folder_uid) tx.policyChanged(current.org_id, { kind: 'dashboard', uid: current.uid });
}

/** Deletes the dashboard and every grant on it. */
export async function deleteDashboard(tx: Tx, dashboard: DashboardRow): Promise<void> {
  await removeGrantsOnResources(tx, dashboard.org_id, { dashboardUids: [dashboard.uid] });
  await tx.db('dashboards').where({ org_id: dashboard.org_id, uid: dashboard.uid }).delete();
  tx.policyChanged(dashboard.org_id, { kind: 'dashboard', uid: dashboard.uid });
}

/** Uids of the org's dashboards matching the filter, by title. Only uids: the caller filters them through the policy first. */
export async function findDashboardUids(db: Knex, orgId: string, filter: FolderFilter): Promise<string[]> {
  const query = whereInFolders(db('dashboards').where('org_id', orgId), 'folder_uid', filter.folderUids);
  return whereContains(query, ['title'], filter.search)
    .orderBy([{ column: 'title' }, { column: 'uid' }])
    .pluck('uid');
}

/** The dashboards of `uids`, in the order of `uids`. */
export async function findDashboardsByUids(db: Knex, orgId: string, uids: string[]): Promise<DashboardRow[]> {
  if (uids.length === 0) return [];
  const rows: DashboardRow[] = await db('dashboards')
    .where('org_id', orgId)
    .whereIn('uid', uids)
    .select(...DASHBOARD_COLUMNS);
  const byUid = new Map(rows.map((row) => [row.uid, row]));
  return uids.map((uid) => byUid.get(uid)).filter((row): row is DashboardRow => row !== undefined);
}
