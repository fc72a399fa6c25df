/** What the folder routes and the resources in folders share: the policy target, the lookups, the audit target. */
import type { Knex } from 'knex';
import type { ResourceRef } from '../authz/types.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { ROOT_FOLDER_UID } from '../http/resource-uid.ts';
import { findFolder, type FolderRow, type RowLock } from './store.ts';

/** A folder as a policy target; no uid means the root (Grafana's `general`), where only wildcards reach. */
export const folderResource = (uid: string | null | undefined): ResourceRef => ({ kind: 'folders', uid: folderUidOf(uid) ?? ROOT_FOLDER_UID });

/** The folder a request names: empty, absent or `general` is the root (null). */
export function folderUidOf(uid: string | null | undefined): string | null {
  return !uid || uid === ROOT_FOLDER_UID ? null : uid;
}

export const folderAuditTarget = (folder: Pick<FolderRow, 'uid' | 'title'>) => ({ type: 'folder', id: folder.uid, name: folder.title });

/** The folder in the active org (one of another org is as unknown as a missing one); call it after authorize(). */
export async function findFolderOrFail(db: Knex, orgId: string, uid: string, lock: boolean | RowLock = false): Promise<FolderRow> {
  const folder = await findFolder(db, orgId, uid, lock);
  if (!folder) throw new NotFoundError(`folder ${uid} not found`);
  return folder;
}

/**
 * The folder a body names as a destination (a parent, a dashboard's or an alert rule's folder):
 * a missing one is bad input, not a missing resource. Empty or `general` is the root (null).
 * Read in the transaction that puts something there, under a shared lock: a delete of the
 * folder, which locks its tree, waits for it or makes it wait, so nothing lands in a folder
 * after its delete was decided.
 */
export async function findDestinationFolder(db: Knex, orgId: string, uid: string | null | undefined, field: string): Promise<FolderRow | null> {
  const folderUid = folderUidOf(uid);
  if (!folderUid) return null;
  const folder = await findFolder(db, orgId, folderUid, 'share');
  if (!folder) throw new BadRequestError(`${field}: folder ${uid} not found`);
  return folder;
}
