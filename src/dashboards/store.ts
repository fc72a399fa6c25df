/**
 * SQL of dashboards. A dashboard lives in one folder of its org (null = the root) and keeps its
 * model as JSON with a version that every save bumps. A create, a move and a
 * delete tell the policy writer (its folder is what its grants inherit from).
 */
import type { Knex } from 'knex';
import { findPage, whereContains, whereInFolders, visibleRows, visibleUids, type FolderFilter, type PageWindow, type VisibleUids } from '../db/search.ts';
import type { Tx } from '../db/transaction.ts';
import {
  DASHBOARDS,
  deleteFoldered,
  findFoldered,
  findFolderedByUids,
  insertFoldered,
  insertFolderedInBulk,
  updateFoldered,
  type FolderedRow,
} from '../folders/foldered.store.ts';

/** How visibleRows finds the dashboards in a folder: through the index on (org_id, folder_uid). */
const IN_FOLDER = { column: 'folder_uid', index: 'dashboards_org_id_folder_uid_index' };

export type DashboardRow = FolderedRow;

/** What a save writes: the model without the fields kept in columns. */
export interface DashboardContent {
  title: string;
  folderUid: string | null;
  model: Record<string, unknown>;
}

const DASHBOARD_COLUMNS = DASHBOARDS.columns;

export const findDashboard = (db: Knex, orgId: string, uid: string, lock = false) => findFoldered<DashboardRow>(db, DASHBOARDS, orgId, uid, lock);

/** The dashboard of the folder (null: the root) with this title, ignoring case, as Grafana compares them. */
export async function findDashboardByTitle(db: Knex, orgId: string, folderUid: string | null, title: string): Promise<DashboardRow | undefined> {
  const query = db('dashboards').where('org_id', orgId).whereRaw('LOWER(title) = ?', [title.toLowerCase()]);
  if (folderUid) query.where('folder_uid', folderUid);
  else query.whereNull('folder_uid');
  return query.first(...DASHBOARD_COLUMNS);
}

const saved = (content: DashboardContent) => ({ title: content.title, folderUid: content.folderUid, content: content.model });

export const insertDashboard = (tx: Tx, orgId: string, uid: string, content: DashboardContent, createdBy: string, now: number) =>
  insertFoldered(tx, DASHBOARDS, orgId, uid, saved(content), createdBy, now);

/** Creates many dashboards of the org at once, with empty models (a benchmark's org). */
export const insertDashboardsInBulk = (
  tx: Tx,
  orgId: string,
  dashboards: Array<{ uid: string; title: string; folderUid: string | null }>,
  createdBy: string,
  now: number,
) => insertFolderedInBulk(tx, DASHBOARDS, orgId, dashboards, createdBy, now);

/** Replaces the dashboard's content as its next version; its grants stay. */
export const updateDashboard = (tx: Tx, current: DashboardRow, content: DashboardContent, updatedBy: string, now: number) =>
  updateFoldered(tx, DASHBOARDS, current, saved(content), updatedBy, now);

/** Deletes the dashboard and every grant on it. */
export const deleteDashboard = (tx: Tx, dashboard: DashboardRow) => deleteFoldered(tx, DASHBOARDS, dashboard);

/** Uids of the org's dashboards matching the filter, by title. Only uids: the caller filters them through the policy first. */
export async function findDashboardUids(db: Knex, orgId: string, filter: FolderFilter): Promise<string[]> {
  const query = whereInFolders(db('dashboards').where('org_id', orgId), 'folder_uid', filter.folderUids);
  return whereContains(query, ['title'], filter.search)
    .orderBy([{ column: 'title' }, { column: 'uid' }])
    .pluck('uid');
}

/** One page of the org's dashboards matching the filter that `visible` holds, by title, with the count of all of them. */
export function findVisibleDashboardPage(db: Knex, orgId: string, filter: FolderFilter, visible: VisibleUids, page: PageWindow) {
  const matching = () =>
    whereContains(
      whereInFolders(visibleRows(db, 'dashboards', orgId, IN_FOLDER, visible), 'dashboards.folder_uid', filter.folderUids),
      ['dashboards.title'],
      filter.search,
    ).select(...DASHBOARD_COLUMNS.map((column) => `dashboards.${column}`));
  // unfiltered, the visible uids are as many as the rows: counted without reading the rows
  const counted = filter.search || filter.folderUids ? matching : () => visibleUids(db, 'dashboards', orgId, IN_FOLDER, visible);
  return findPage<DashboardRow>(matching, ['dashboards.title', 'dashboards.uid'], page, counted);
}

/** The dashboards of `uids`, in the order of `uids`. */
export const findDashboardsByUids = (db: Knex, orgId: string, uids: string[]) => findFolderedByUids<DashboardRow>(db, DASHBOARDS, orgId, uids);
