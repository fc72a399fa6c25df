/**
 * A page of the folders a caller may read: filtered in SQL by the sets the policy answers
 * (authz/visible), or, for a caller whose sets are too many uids to bind, through the policy's
 * filter over every match. Either way the same folders, in the same order.
 */
import type { Knex } from 'knex';
import type { ListedKind, ResourceRef, VisibleSet } from '../authz/types.ts';
import { bindsVisible, type FolderFilter, type PageWindow } from '../db/search.ts';
import { findFoldersByUids, findFolderUids, findVisibleFolderPage, type FolderRow } from './store.ts';
import { folderResource } from './target.ts';

/** What a listing asks of the route: the policy's sets, and its filter for the fallback. */
export interface ListingAccess {
  visible(action: 'folders:read', kind: ListedKind): Promise<Readonly<VisibleSet>>;
  filter<T>(action: 'folders:read', items: readonly T[], resourceOf: (item: T) => ResourceRef): Promise<T[]>;
}

export async function listReadableFolders(
  db: Knex,
  orgId: string,
  search: FolderFilter,
  page: PageWindow,
  access: ListingAccess,
): Promise<{ totalCount: number; rows: FolderRow[] }> {
  const visible = await access.visible('folders:read', 'folders');
  if (bindsVisible(visible)) return findVisibleFolderPage(db, orgId, search, visible, page);
  const readable = await access.filter('folders:read', await findFolderUids(db, orgId, search), folderResource);
  return { totalCount: readable.length, rows: await findFoldersByUids(db, orgId, readable.slice(page.offset, page.offset + page.limit)) };
}
