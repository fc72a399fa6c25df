/**
 * SQL of the folder tree. A folder belongs to one org and names its parent by uid (null = a root
 * folder); its title is unique among its siblings, ignoring case (a unique index). Every create,
 * move and delete says so through the policy writer (accesscontrol/policy-writer.ts: foldersPlaced,
 * folderTreeDeleted), so the loaded documents follow the ancestor chains.
 */
import type { Knex } from 'knex';
import { lockRows, type RowLock } from '../db/row-lock.ts';
import { folderTreeDeleted, foldersPlaced, removeGrantsOnResources, resourcesFiledInBulk } from '../accesscontrol/policy-writer.ts';
import { inStatementChunks, ROWS_PER_STATEMENT } from '../db/chunks.ts';
import { findPage, whereContains, whereInFolders, visibleRows, visibleUids, type FolderFilter, type PageWindow, type VisibleUids } from '../db/search.ts';
import type { Tx } from '../db/transaction.ts';

/** How visibleRows finds the folders it walked (a folder is its own folder): by their key, (org_id, uid). */
const IN_FOLDER = { column: 'uid', index: 'PRIMARY' };

/** Folders nest this deep at most: a root folder is level 1. */
export const MAX_FOLDER_DEPTH = 8;

export interface FolderRow {
  org_id: string;
  uid: string;
  title: string;
  description: string;
  parent_uid: string | null;
  created_at: number;
  updated_at: number;
  created_by: string | null;
  updated_by: string | null;
}

const FOLDER_COLUMNS = ['org_id', 'uid', 'title', 'description', 'parent_uid', 'created_at', 'updated_at', 'created_by', 'updated_by'] as const;

export type { RowLock };

/** `lock`: true (or `update`) or `share`, see RowLock. */
export async function findFolder(db: Knex, orgId: string, uid: string, lock: boolean | RowLock = false): Promise<FolderRow | undefined> {
  const query = db('folders').where({ org_id: orgId, uid });
  return lockRows(db, query, lock === true ? 'update' : lock || undefined).first(...FOLDER_COLUMNS);
}

/**
 * Makes the tree-shape changes of one org's folders (moves and creates) take turns, on the org's
 * row (which a create locks for its quota too): the cycle and depth checks of each see every move
 * committed before it, so two moves that are each fine alone cannot together close a cycle or
 * nest past the limit.
 */
export async function lockFolderTree(db: Knex, orgId: string): Promise<void> {
  await lockRows(db, db('orgs').where('id', orgId), 'update').first('id');
}

/**
 * Titles of dashboards and of alert rules are unique in a folder, which no index holds: the saves
 * that give a title in a folder take turns on its row (the org's row at the root), so the title
 * check of each sees the titles committed before it.
 */
export async function lockTitlesIn(db: Knex, orgId: string, folderUid: string | null): Promise<void> {
  const row = folderUid ? db('folders').where({ org_id: orgId, uid: folderUid }) : db('orgs').where('id', orgId);
  await lockRows(db, row, 'update').first();
}

/** The folder's ancestors, nearest first (at most the depth limit: the tree never holds a cycle). */
export async function findAncestors(db: Knex, orgId: string, folder: FolderRow): Promise<FolderRow[]> {
  const ancestors: FolderRow[] = [];
  let parentUid = folder.parent_uid;
  while (parentUid && ancestors.length < MAX_FOLDER_DEPTH) {
    const parent = await findFolder(db, orgId, parentUid);
    if (!parent) break;
    ancestors.push(parent);
    parentUid = parent.parent_uid;
  }
  return ancestors;
}

/**
 * The uids of the folder's subtree, the folder first, level by level; `levels` counts them (1 for
 * a leaf). The tree is at most the depth limit deep, so the walk stops there whatever the data.
 */
export async function findSubtree(db: Knex, orgId: string, uid: string): Promise<{ uids: string[]; levels: number }> {
  const uids = [uid];
  let level = [uid];
  let levels = 1;
  while (levels < MAX_FOLDER_DEPTH) {
    const children: string[] = await db('folders').where('org_id', orgId).whereIn('parent_uid', level).pluck('uid');
    if (children.length === 0) break;
    uids.push(...children);
    level = children;
    levels += 1;
  }
  return { uids, levels };
}

/** The uids of the folders whose parent is one of `filter.folderUids` (null: the root), whose title contains `filter.search`, by title. */
export async function findFolderUids(db: Knex, orgId: string, filter: FolderFilter): Promise<string[]> {
  const query = whereInFolders(db('folders').where('org_id', orgId), 'parent_uid', filter.folderUids);
  return whereContains(query, ['title'], filter.search)
    .orderBy([{ column: 'title' }, { column: 'uid' }])
    .pluck('uid');
}

/** One page of the org's folders matching the filter that `visible` holds, by title, with the count of all of them. */
export function findVisibleFolderPage(db: Knex, orgId: string, filter: FolderFilter, visible: VisibleUids, page: PageWindow) {
  const matching = () =>
    whereContains(
      whereInFolders(visibleRows(db, 'folders', orgId, IN_FOLDER, visible), 'folders.parent_uid', filter.folderUids),
      ['folders.title'],
      filter.search,
    ).select(...FOLDER_COLUMNS.map((column) => `folders.${column}`));
  // unfiltered, the visible uids are as many as the rows: counted without reading the rows
  const counted = filter.search || filter.folderUids ? matching : () => visibleUids(db, 'folders', orgId, IN_FOLDER, visible);
  return findPage<FolderRow>(matching, ['folders.title', 'folders.uid'], page, counted);
}

/** The folders of `uids`, in the order of `uids`. */
export async function findFoldersByUids(db: Knex, orgId: string, uids: string[]): Promise<FolderRow[]> {
  if (uids.length === 0) return [];
  const rows: FolderRow[] = await db('folders')
    .where('org_id', orgId)
    .whereIn('uid', uids)
    .select(...FOLDER_COLUMNS);
  const byUid = new Map(rows.map((row) => [row.uid, row]));
  return uids.map((uid) => byUid.get(uid)).filter((row): row is FolderRow => row !== undefined);
}

/**
 * The columns of the unique index on sibling titles: the parent ('' at the root, where parent_uid
 * is NULL and an index would not compare it) and the title ignoring case.
 */
export function siblingKeys(parentUid: string | null, title: string): { parent_key: string; title_key: string } {
  return { parent_key: parentUid ?? '', title_key: title.toLowerCase() };
}

/** The folder of the parent (null: the root) titled `title`, ignoring case. */
export async function findSiblingByTitle(db: Knex, orgId: string, parentUid: string | null, title: string): Promise<FolderRow | undefined> {
  return db('folders')
    .where({ org_id: orgId, ...siblingKeys(parentUid, title) })
    .first(...FOLDER_COLUMNS);
}

/** Creates many folders of the org at once, parents before their children (a benchmark's org). */
export async function insertFoldersInBulk(
  tx: Tx,
  orgId: string,
  folders: Array<{ uid: string; title: string; parentUid: string | null }>,
  createdBy: string,
  now: number,
): Promise<void> {
  const rows = folders.map((folder) => ({
    org_id: orgId,
    uid: folder.uid,
    title: folder.title,
    description: '',
    parent_uid: folder.parentUid,
    ...siblingKeys(folder.parentUid, folder.title),
    created_at: now,
    updated_at: now,
    created_by: createdBy,
    updated_by: createdBy,
  }));
  await inStatementChunks(rows, (chunk) => tx.db('folders').insert(chunk));
  resourcesFiledInBulk(tx, orgId);
}

export async function insertFolder(
  tx: Tx,
  folder: { orgId: string; uid: string; title: string; description: string; parentUid: string | null; createdBy: string },
  now: number,
): Promise<void> {
  await tx.db('folders').insert({
    org_id: folder.orgId,
    uid: folder.uid,
    title: folder.title,
    description: folder.description,
    parent_uid: folder.parentUid,
    ...siblingKeys(folder.parentUid, folder.title),
    created_at: now,
    updated_at: now,
    created_by: folder.createdBy,
    updated_by: folder.createdBy,
  });
  foldersPlaced(tx, folder.orgId, [folder.uid]);
}

export interface FolderChanges {
  title?: string;
  description?: string;
  parent_uid?: string | null;
}

export async function updateFolder(tx: Tx, folder: FolderRow, changes: FolderChanges, updatedBy: string, now: number): Promise<void> {
  const keys = siblingKeys(changes.parent_uid === undefined ? folder.parent_uid : changes.parent_uid, changes.title ?? folder.title);
  await tx
    .db('folders')
    .where({ org_id: folder.org_id, uid: folder.uid })
    .update({ ...changes, ...keys, updated_by: updatedBy, updated_at: now });
  // Only a move changes ancestor chains: those of the folder and everything below it.
  if (changes.parent_uid !== undefined) foldersPlaced(tx, folder.org_id, (await findSubtree(tx.db, folder.org_id, folder.uid)).uids);
}

export interface FolderContents {
  folders: number;
  dashboards: number;
  alertRules: number;
}

async function countIn(db: Knex, table: string, orgId: string, column: string, uids: string[]): Promise<number> {
  const [row] = await db(table).where('org_id', orgId).whereIn(column, uids).count<Array<{ total: number | string }>>({ total: '*' });
  return Number(row?.total ?? 0);
}

/** What the folder holds directly: subfolders, dashboards and alert rules. */
export async function countFolderContents(db: Knex, orgId: string, uid: string): Promise<FolderContents> {
  const [folders, dashboards, alertRules] = await Promise.all([
    countIn(db, 'folders', orgId, 'parent_uid', [uid]),
    countIn(db, 'dashboards', orgId, 'folder_uid', [uid]),
    countIn(db, 'alert_rules', orgId, 'folder_uid', [uid]),
  ]);
  return { folders, dashboards, alertRules };
}

/**
 * What deleting a folder removes: the folders of its subtree (the folder first, level by level)
 * and the dashboards and alert rules in them, with what their audit entries name.
 */
export interface FolderTreeContents {
  folders: Array<Pick<FolderRow, 'uid' | 'title' | 'parent_uid'>>;
  dashboards: Array<{ uid: string; title: string; folder_uid: string; version: number }>;
  alertRules: Array<{ uid: string; title: string; folder_uid: string; rule_group: string }>;
}

/**
 * The folder's subtree and everything in it (empty when the folder is missing), or undefined
 * when it holds more than `atMost` subfolders, dashboards and alert rules: the reads stop there,
 * so a huge tree costs no more than the bound. `lock` (a delete in its transaction) holds every
 * row read until the transaction ends, so nothing moves in or out meanwhile. The tree is at most
 * the depth limit deep, so the walk stops there whatever the data.
 */
export async function findFolderTreeContents(db: Knex, orgId: string, uid: string, atMost: number, lock?: RowLock): Promise<FolderTreeContents | undefined> {
  let left = atMost;
  /** The rows of `table` whose `column` is one of `keys`, a statement per 500 keys; undefined past what is left. */
  async function readWithin<R>(table: string, column: string, keys: string[], columns: string[]): Promise<R[] | undefined> {
    const rows: R[] = [];
    for (let i = 0; i < keys.length; i += ROWS_PER_STATEMENT) {
      const chunk = keys.slice(i, i + ROWS_PER_STATEMENT);
      const query = lockRows(db, db(table).where('org_id', orgId).whereIn(column, chunk), lock);
      rows.push(
        ...((await query
          .orderBy('uid')
          .limit(left - rows.length + 1)
          .select(...columns)) as R[]),
      );
      if (rows.length > left) return undefined;
    }
    left -= rows.length;
    return rows;
  }
  const folders: FolderTreeContents['folders'] = await lockRows(db, db('folders').where({ org_id: orgId, uid }), lock).select('uid', 'title', 'parent_uid');
  let level = folders.map((folder) => folder.uid);
  for (let depth = 1; depth < MAX_FOLDER_DEPTH && level.length > 0; depth += 1) {
    const children = await readWithin<FolderTreeContents['folders'][number]>('folders', 'parent_uid', level, ['uid', 'title', 'parent_uid']);
    if (!children) return undefined;
    folders.push(...children);
    level = children.map((folder) => folder.uid);
  }
  const uids = folders.map((folder) => folder.uid);
  const dashboards = await readWithin<FolderTreeContents['dashboards'][number]>('dashboards', 'folder_uid', uids, ['uid', 'title', 'folder_uid', 'version']);
  if (!dashboards) return undefined;
  const alertRules = await readWithin<FolderTreeContents['alertRules'][number]>('alert_rules', 'folder_uid', uids, [
    'uid',
    'title',
    'folder_uid',
    'rule_group',
  ]);
  if (!alertRules) return undefined;
  return { folders, dashboards, alertRules };
}

/**
 * Deletes a subtree read by findFolderTreeContents (under its lock): exactly its folders,
 * dashboards and alert rules, and every grant on any of them.
 */
export async function deleteFolderTree(tx: Tx, orgId: string, contents: FolderTreeContents): Promise<void> {
  const folderUids = contents.folders.map((folder) => folder.uid);
  const dashboardUids = contents.dashboards.map((dashboard) => dashboard.uid);
  const alertRuleUids = contents.alertRules.map((rule) => rule.uid);
  await removeGrantsOnResources(tx, orgId, { folderUids, dashboardUids, alertRuleUids });
  await inStatementChunks(dashboardUids, (chunk) => tx.db('dashboards').where('org_id', orgId).whereIn('uid', chunk).delete());
  await inStatementChunks(alertRuleUids, (chunk) => tx.db('alert_rules').where('org_id', orgId).whereIn('uid', chunk).delete());
  await inStatementChunks(folderUids, (chunk) => tx.db('folders').where('org_id', orgId).whereIn('uid', chunk).delete());
  folderTreeDeleted(tx, orgId, { folderUids, dashboardUids, alertRuleUids });
}
