/** What searchable lists share: a case-insensitive "contains" over some columns, and a page with its total. */
import type { Knex } from 'knex';
import { dialectOf } from './knex.ts';

/**
 * Narrows `query` to rows where one of `columns` contains `search`, ignoring case. `%` and `_`
 * in a search are literal; `!` escapes them (one escape character on both dialects). Column
 * names are the caller's constants, never user input.
 */
export function whereContains<T extends Knex.QueryBuilder>(query: T, columns: string[], search: string | undefined): T {
  if (!search) return query;
  const pattern = `%${search.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
  return query.where((q) => {
    for (const column of columns) q.orWhereRaw(`LOWER(${column}) LIKE ? ESCAPE '!'`, [pattern]);
  }) as T;
}

/** A column to sort on, ascending unless it says otherwise. */
export type SortColumn = string | { column: string; order: 'asc' | 'desc' };

/** Which rows a page holds: what stores need of a list request's page. */
export interface PageWindow {
  limit: number;
  offset: number;
}

/**
 * One page of what `matching` selects, in `order`, with the count of all of it; a page of no rows
 * only counts. A page shorter than asked is the end of the list, so its total is what comes before
 * it and its rows, and nothing is counted. `counted` (default `matching`) selects as many rows as
 * `matching` at less cost, e.g. through indexes alone.
 */
export async function findPage<Row>(
  matching: () => Knex.QueryBuilder,
  order: SortColumn[],
  page: PageWindow,
  counted: () => Knex.QueryBuilder = matching,
): Promise<{ totalCount: number; rows: Row[] }> {
  const rows: Row[] =
    page.limit > 0
      ? await matching()
          .orderBy(order.map((sort) => (typeof sort === 'string' ? { column: sort } : sort)))
          .limit(page.limit)
          .offset(page.offset)
      : [];
  // an empty page past the end says nothing of how far the end is
  if (rows.length > 0 && rows.length < page.limit) return { totalCount: page.offset + rows.length, rows };
  if (page.limit > 0 && rows.length === 0 && page.offset === 0) return { totalCount: 0, rows };
  const [countRow] = await counted().clearSelect().count<Array<{ total: number | string }>>({ total: '*' });
  return { totalCount: Number(countRow?.total ?? 0), rows };
}

/** A search over resources in the folder tree: a title substring, and the folders to look in. */
export interface FolderFilter {
  search?: string;
  /** Only what lives in these folders (null: the root); undefined: anywhere. */
  folderUids?: Array<string | null>;
}

/** Narrows to rows whose `column` (a folder uid) is one of `folderUids`, where null stands for the root. */
export function whereInFolders(query: Knex.QueryBuilder, column: string, folderUids: Array<string | null> | undefined): Knex.QueryBuilder {
  if (!folderUids) return query;
  const named = folderUids.filter((uid): uid is string => uid !== null);
  return query.where((q) => {
    q.whereIn(column, named);
    if (folderUids.includes(null)) q.orWhereNull(column);
  });
}

/**
 * The items a caller may see, as the policy answers a list (authz/visible): all of them, or
 * those in `folders` (a folder itself, or the folder a resource is in) and those in `items`.
 */
export type VisibleUids = { all: true } | { all: false; folders: readonly string[]; items: readonly string[] };

/**
 * How many uids a visible set may bind into one statement: SQLite takes at most 32,766 values
 * in one. A caller with more (thousands of direct grants and no wildcard) is listed through the
 * policy's filter instead, item by item.
 */
export const MAX_BOUND_VISIBLE_UIDS = 20_000;

export const bindsVisible = (visible: VisibleUids): boolean => visible.all || visible.folders.length + visible.items.length <= MAX_BOUND_VISIBLE_UIDS;

/**
 * The uids (`visible_uid`) of the rows of `table` in `orgId` that `visible` holds, as a query to
 * select from: every row, or those whose folder column (a folder's own `uid`, a resource's
 * `folder_uid`) is a listed folder or one under it, or whose uid is a listed item. The folders
 * under the listed ones are walked in SQL (a recursive common table expression over `parent_uid`,
 * as deep as the tree), as the policy's folder chains are built from the same rows. The uids are
 * gathered through the indexes on (org_id, parent_uid), (org_id, folder_uid) and the key alone,
 * each once. CROSS JOIN keeps that order on SQLite, whose planner without statistics would rather
 * walk the whole org (MariaDB reads it as an inner join).
 */
function visibleUidRows(db: Knex, table: string, orgId: string, folder: FolderColumn, visible: VisibleUids & { all: false }): Knex.QueryBuilder {
  const { folders, items } = visible;
  const walked = db.from('visible_folders as v');
  // MariaDB: the same order and index whatever its statistics say (until they catch up with a large change, they may say to walk the org)
  if (dialectOf(db) === 'mysql') walked.joinRaw('STRAIGHT_JOIN ?? AS t FORCE INDEX (??) ON ?? = ??', [table, folder.index, `t.${folder.column}`, 'v.uid']);
  else walked.crossJoin(`${table} as t`, `t.${folder.column}`, 'v.uid');
  const inFolders = walked.where('t.org_id', orgId).select('t.uid as visible_uid');
  const direct = db
    .from(`${table} as t`)
    .where('t.org_id', orgId)
    .whereIn('t.uid', [...items])
    .select('t.uid as visible_uid');
  return folders.length === 0 ? direct : items.length === 0 ? inFolders : inFolders.union(direct);
}

/** Puts the walk of the folders under `visible.folders` (visibleUidRows) before `query`. */
function withVisibleFolders(query: Knex.QueryBuilder, orgId: string, folders: readonly string[]): Knex.QueryBuilder {
  if (folders.length === 0) return query;
  return query.withRecursive('visible_folders', ['uid'], (granted) =>
    granted
      .select('uid')
      .from('folders')
      .where('org_id', orgId)
      .whereIn('uid', [...folders])
      .union((under) => under.select('f.uid').from('visible_folders as w').crossJoin('folders as f', 'f.parent_uid', 'w.uid').where('f.org_id', orgId)),
  );
}

/** The column of a row's folder (a folder's own `uid`, a resource's `folder_uid`) and the index that leads with (org_id, it). */
export interface FolderColumn {
  column: string;
  index: string;
}

const nothingVisible = (visible: VisibleUids) => !visible.all && visible.folders.length === 0 && visible.items.length === 0;

/**
 * The rows of `table` in `orgId` that `visible` holds (visibleUidRows), as a query to narrow
 * further. The uids are gathered first and the rows read by key: only they are read and sorted,
 * never every row of the org.
 */
export function visibleRows(db: Knex, table: string, orgId: string, folder: FolderColumn, visible: VisibleUids): Knex.QueryBuilder {
  if (visible.all) return db(table).where(`${table}.org_id`, orgId);
  if (nothingVisible(visible)) return db(table).where(`${table}.org_id`, orgId).whereRaw('1 = 0');
  const uids = visibleUidRows(db, table, orgId, folder, visible);
  const rows = db.from(uids.as('visible')).crossJoin(table, `${table}.uid`, 'visible.visible_uid').where(`${table}.org_id`, orgId);
  return withVisibleFolders(rows, orgId, visible.folders);
}

/**
 * As many rows as visibleRows selects, to be counted: the uids alone, read from the indexes,
 * without the rows (a uid is one row of the org: the key is (org_id, uid)).
 */
export function visibleUids(db: Knex, table: string, orgId: string, folder: FolderColumn, visible: VisibleUids): Knex.QueryBuilder {
  if (visible.all || nothingVisible(visible)) return visibleRows(db, table, orgId, folder, visible);
  return withVisibleFolders(db.from(visibleUidRows(db, table, orgId, folder, visible).as('visible')), orgId, visible.folders);
}
