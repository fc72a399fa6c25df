/**
 * SQL shared by the resources that live in a folder (dashboards, alert rules): one row per uid
 * in its org, a folder, a title, JSON content and a version that every save bumps. A create, a
 * move to another folder and a delete say so through the policy writer (resourceFiled: its folder
 * is what its grants inherit from), and a delete takes every grant on the resource with it.
 */
import type { Knex } from 'knex';
import { removeGrantsOnResources, resourceFiled, resourcesFiledInBulk } from '../accesscontrol/policy-writer.ts';
import { inStatementChunks } from '../db/chunks.ts';
import { dialectOf } from '../db/knex.ts';
import type { Tx } from '../db/transaction.ts';

/** The columns every folder-scoped resource has; a kind adds its own. */
export interface FolderedRow {
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

export interface FolderedKind {
  table: 'dashboards' | 'alert_rules';
  grants: 'dashboardUids' | 'alertRuleUids';
  columns: readonly string[];
}

const COMMON_COLUMNS = ['org_id', 'uid', 'title', 'folder_uid', 'data', 'version', 'created_at', 'updated_at', 'created_by', 'updated_by'] as const;

export const DASHBOARDS: FolderedKind = { table: 'dashboards', grants: 'dashboardUids', columns: COMMON_COLUMNS };
export const ALERT_RULES: FolderedKind = { table: 'alert_rules', grants: 'alertRuleUids', columns: [...COMMON_COLUMNS, 'rule_group'] };

/** What a save writes: the common columns, the kind's own (`extra`), and the content as JSON. */
export interface FolderedContent {
  title: string;
  folderUid: string | null;
  content: Record<string, unknown>;
  extra?: Record<string, string>;
}

/** `lock`: on MySQL the row stays locked until the transaction ends (writers of its grants take turns). */
export async function findFoldered<T extends FolderedRow>(db: Knex, kind: FolderedKind, orgId: string, uid: string, lock = false): Promise<T | undefined> {
  const query = db(kind.table).where({ org_id: orgId, uid });
  if (lock && dialectOf(db) === 'mysql') query.forUpdate();
  return (await query.first(...kind.columns)) as T | undefined;
}

/** The rows of `uids`, in the order of `uids`. */
export async function findFolderedByUids<T extends FolderedRow>(db: Knex, kind: FolderedKind, orgId: string, uids: string[]): Promise<T[]> {
  if (uids.length === 0) return [];
  const rows = (await db(kind.table)
    .where('org_id', orgId)
    .whereIn('uid', uids)
    .select(...kind.columns)) as T[];
  const byUid = new Map(rows.map((row) => [row.uid, row]));
  return uids.map((uid) => byUid.get(uid)).filter((row): row is T => row !== undefined);
}

export async function insertFoldered(
  tx: Tx,
  kind: FolderedKind,
  orgId: string,
  uid: string,
  save: FolderedContent,
  createdBy: string,
  now: number,
): Promise<void> {
  await tx.db(kind.table).insert({
    org_id: orgId,
    uid,
    title: save.title,
    folder_uid: save.folderUid,
    ...save.extra,
    data: JSON.stringify(save.content),
    version: 1,
    created_at: now,
    updated_at: now,
    created_by: createdBy,
    updated_by: createdBy,
  });
  resourceFiled(tx, kind.table, orgId, uid);
}

/** Creates many resources of the kind at once, with empty content (a benchmark's org). */
export async function insertFolderedInBulk(
  tx: Tx,
  kind: FolderedKind,
  orgId: string,
  items: Array<{ uid: string; title: string; folderUid: string | null }>,
  createdBy: string,
  now: number,
): Promise<void> {
  const rows = items.map((item) => ({
    org_id: orgId,
    uid: item.uid,
    title: item.title,
    folder_uid: item.folderUid,
    data: '{}',
    version: 1,
    created_at: now,
    updated_at: now,
    created_by: createdBy,
    updated_by: createdBy,
  }));
  await inStatementChunks(rows, (chunk) => tx.db(kind.table).insert(chunk));
  resourcesFiledInBulk(tx, orgId);
}

/** Replaces the content as the next version; the grants on the resource stay. */
export async function updateFoldered(tx: Tx, kind: FolderedKind, current: FolderedRow, save: FolderedContent, updatedBy: string, now: number): Promise<void> {
  const moved = save.folderUid !== current.folder_uid;
  await tx
    .db(kind.table)
    .where({ org_id: current.org_id, uid: current.uid })
    .update({
      title: save.title,
      // only a move writes the column the policy reads
      ...(moved && { folder_uid: save.folderUid }),
      ...save.extra,
      data: JSON.stringify(save.content),
      version: current.version + 1,
      updated_by: updatedBy,
      updated_at: now,
    });
  if (moved) resourceFiled(tx, kind.table, current.org_id, current.uid);
}

/** Deletes the resource and every grant on it. */
export async function deleteFoldered(tx: Tx, kind: FolderedKind, row: FolderedRow): Promise<void> {
  await removeGrantsOnResources(tx, row.org_id, { [kind.grants]: [row.uid] });
  await tx.db(kind.table).where({ org_id: row.org_id, uid: row.uid }).delete();
  resourceFiled(tx, kind.table, row.org_id, row.uid);
}
