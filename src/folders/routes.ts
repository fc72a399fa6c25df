/**
 * Folders of the active org (`/api/folders…`), modelled on Grafana's folder API: a tree up to
 * eight levels deep, titles unique among siblings, listed level by level, moved through
 * `parentUid` on update, deleted with everything in it. Dashboards and alert rules inherit their
 * folder's grants (the policy's candidate scopes), so every change to the tree reaches the policy
 * document.
 */
import { recordAudit, recordAudits } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import { resourceUidSchema, uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { newUid } from '../db/ids.ts';
import { isUniqueViolation } from '../db/errors.ts';
import type { Tx } from '../db/transaction.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import { FOLDER_GRANTS } from '../permissions/levels.ts';
import { grantCreatorAdmin } from '../permissions/resource-grants.ts';
import { listReadableFolders } from './listing.ts';
import { FOLDER_SCHEMA, presentFolder } from './presenter.ts';
import {
  countFolderContents,
  deleteFolderTree,
  findAncestors,
  findFolderTreeContents,
  findFolder,
  findSiblingByTitle,
  findSubtree,
  insertFolder,
  lockFolderTree,
  MAX_FOLDER_DEPTH,
  updateFolder,
  type FolderChanges,
  type FolderRow,
} from './store.ts';
import { findDestinationFolder, findFolderOrFail, folderAuditTarget, folderResource, folderUidOf } from './target.ts';
import { assertDecidedOn, deletionAudits, deletionRequirements, MAX_FOLDER_DELETE_ITEMS, tooManyToDelete } from './tree-delete.ts';
import type { Knex } from 'knex';
import { listPageSchema } from '../http/responses.ts';

const titleSchema = { type: 'string', minLength: 1, maxLength: 190 } as const;
const descriptionSchema = { type: 'string', maxLength: 1000 } as const;

function folderTitle(title: string): string {
  const trimmed = title.trim();
  if (!trimmed) throw new BadRequestError('body.title must not be blank');
  return trimmed;
}

/** The level a new child of `parent` would sit at (a root folder is level 1). */
async function childLevel(db: Knex, orgId: string, parent: FolderRow | null): Promise<number> {
  return parent ? (await findAncestors(db, orgId, parent)).length + 2 : 1;
}

const tooDeep = () => new BadRequestError(`folders nest at most ${MAX_FOLDER_DEPTH} levels deep`);

/**
 * Runs `write`, which gives the folder `selfUid` (null: a new one) `title` under `parentUid` (null:
 * the root), unless another folder there has that title, ignoring case: 409. The look-up answers
 * the common case; the unique index answers a concurrent writer that got there first, whose folder
 * the look-up finds once the index has refused this one.
 */
async function withTitleFree<T>(tx: Tx, orgId: string, parentUid: string | null, title: string, selfUid: string | null, write: () => Promise<T>): Promise<T> {
  const assertFree = async () => {
    const sibling = await findSiblingByTitle(tx.db, orgId, parentUid, title);
    if (sibling && sibling.uid !== selfUid) {
      const where = parentUid ? `in folder ${parentUid}` : 'at the root';
      // The caller's own title: the sibling may be one the caller cannot read.
      throw new ConflictError(`a folder titled "${title}" already exists ${where}: folder titles are unique among siblings, ignoring case`);
    }
  };
  await assertFree();
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) await assertFree();
    throw err;
  }
}

const FOLDER_PAGE_SCHEMA = listPageSchema('folders', FOLDER_SCHEMA);

/** Grafana's counts of what a folder holds directly, by kind. */
const FOLDER_COUNTS_SCHEMA = {
  type: 'object',
  properties: { folder: { type: 'integer' }, dashboard: { type: 'integer' }, alertrule: { type: 'integer' } },
  required: ['folder', 'dashboard', 'alertrule'],
} as const;

const FOLDER_DELETED_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string' }, uid: { type: 'string' }, title: { type: 'string' } },
  required: ['message', 'uid', 'title'],
} as const;

export const folderRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/folders',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      properties: { ...paginationQuerySchema, parentUid: { type: 'string', maxLength: 40 }, query: { type: 'string', maxLength: 190 } },
      additionalProperties: false,
    },
    summary: 'Lists one level of the folder tree (the root unless parentUid), only the folders the caller may read.',
    responses: { 200: FOLDER_PAGE_SCHEMA },
    async handler({ ctx, query, orgId, services, authorize, filter, visible }) {
      await authorize('folders:read');
      const page = pageOf(query);
      // One policy call for the whole org, then one page of the level in SQL: totalCount counts what the caller may read.
      const search = { search: query.query?.trim(), folderUids: [query.parentUid || null] };
      const { totalCount, rows } = await listReadableFolders(services.db, orgId, search, page, { visible, filter });
      ctx.body = { totalCount, folders: rows.map(presentFolder), page: page.page, perPage: page.perPage };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/folders',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: { uid: resourceUidSchema, title: titleSchema, description: descriptionSchema, parentUid: { type: 'string', maxLength: 40 } },
      required: ['title'],
      additionalProperties: false,
    },
    summary: 'Creates a folder, at the root or in parentUid; its creator gets Admin on it.',
    responses: { 201: FOLDER_SCHEMA },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      await authorize('folders:create', folderResource(body.parentUid));
      const title = folderTitle(body.title);
      const uid = body.uid ?? newUid();
      const now = services.clock.now();
      const folder = await services.transact(async (tx) => {
        await lockFolderTree(tx.db, orgId);
        await enforceOrgQuota(tx, services.config, orgId, 'folders', now);
        const parent = await findDestinationFolder(tx.db, orgId, body.parentUid, 'body.parentUid');
        if ((await childLevel(tx.db, orgId, parent)) > MAX_FOLDER_DEPTH) throw tooDeep();
        if (await findFolder(tx.db, orgId, uid)) throw new ConflictError(`a folder with uid ${uid} already exists`);
        const parentUid = parent?.uid ?? null;
        await withTitleFree(tx, orgId, parentUid, title, null, () =>
          insertFolder(tx, { orgId, uid, title, description: body.description ?? '', parentUid, createdBy: principal.user.id }, now),
        );
        await grantCreatorAdmin(tx, orgId, FOLDER_GRANTS, uid, principal.user.id, now);
        const created = (await findFolder(tx.db, orgId, uid))!;
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'folder.created', orgId, target: folderAuditTarget(created), metadata: { parentUid: created.parent_uid } },
          now,
        );
        return created;
      });
      ctx.status = 201;
      ctx.body = presentFolder(folder);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/folders/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Reads a folder.',
    responses: { 200: FOLDER_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('folders:read', folderResource(params.uid));
      ctx.body = presentFolder(await findFolderOrFail(services.db, orgId, params.uid));
    },
  });

  routes.add({
    method: 'get',
    path: '/api/folders/:uid/counts',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Counts the subfolders, dashboards and alert rules directly in a folder.',
    responses: { 200: FOLDER_COUNTS_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('folders:read', folderResource(params.uid));
      const folder = await findFolderOrFail(services.db, orgId, params.uid);
      const counts = await countFolderContents(services.db, orgId, folder.uid);
      ctx.body = { folder: counts.folders, dashboard: counts.dashboards, alertrule: counts.alertRules };
    },
  });

  routes.add({
    method: 'put',
    path: '/api/folders/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: {
      type: 'object',
      properties: { title: titleSchema, description: descriptionSchema, parentUid: { type: ['string', 'null'], maxLength: 40 } },
      minProperties: 1,
      additionalProperties: false,
    },
    summary: 'Renames, describes or moves a folder (parentUid; null moves it to the root).',
    responses: { 200: FOLDER_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      const before = await findFolder(services.db, orgId, params.uid);
      // A move also creates a folder in its new parent: the same decision asks folders:create
      // there (naming the parent it already has is no move).
      const moving = body.parentUid !== undefined && folderUidOf(body.parentUid) !== (before?.parent_uid ?? null);
      await authorize('folders:write', folderResource(params.uid), moving ? { destination: folderResource(body.parentUid) } : {});
      const title = body.title === undefined ? undefined : folderTitle(body.title);
      const now = services.clock.now();
      const folder = await services.transact(async (tx) => {
        if (moving) await lockFolderTree(tx.db, orgId);
        // Under lock: a delete that committed first leaves nothing to update (404), one that comes later waits for this write.
        const current = await findFolderOrFail(tx.db, orgId, params.uid, 'update');
        const changes: FolderChanges = {
          ...(title !== undefined && title !== current.title && { title }),
          ...(body.description !== undefined && body.description !== current.description && { description: body.description }),
        };
        if (body.parentUid !== undefined) {
          const parent = await findDestinationFolder(tx.db, orgId, body.parentUid, 'body.parentUid');
          if ((parent?.uid ?? null) !== current.parent_uid) {
            // Moved by someone else since the check above, which then judged another move.
            if (!moving) throw new ConflictError(`folder ${current.uid} was moved meanwhile: load it again`);
            const subtree = await findSubtree(tx.db, orgId, current.uid);
            if (parent && subtree.uids.includes(parent.uid))
              throw new BadRequestError(`folder ${current.uid} cannot move into itself or one of its subfolders`);
            if ((await childLevel(tx.db, orgId, parent)) + subtree.levels - 1 > MAX_FOLDER_DEPTH) throw tooDeep();
            changes.parent_uid = parent?.uid ?? null;
          }
        }
        const fields = Object.keys(changes).sort();
        if (fields.length === 0) return current;
        const write = () => updateFolder(tx, current, changes, principal.user.id, now);
        if (changes.title === undefined && changes.parent_uid === undefined) await write();
        else
          await withTitleFree(
            tx,
            orgId,
            changes.parent_uid === undefined ? current.parent_uid : changes.parent_uid,
            changes.title ?? current.title,
            current.uid,
            write,
          );
        const updated = (await findFolder(tx.db, orgId, current.uid))!;
        const metadata = { fields, ...(changes.parent_uid !== undefined && { previousParentUid: current.parent_uid, parentUid: changes.parent_uid }) };
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'folder.updated', orgId, target: folderAuditTarget(updated), metadata }, now);
        return updated;
      });
      ctx.body = presentFolder(folder);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/folders/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    query: {
      type: 'object',
      properties: { forceDeleteRules: { type: 'boolean', default: false } },
      additionalProperties: false,
    },
    summary: 'Deletes a folder with its subfolders, dashboards and (with forceDeleteRules) alert rules; the caller must be allowed to delete each of them.',
    responses: { 200: FOLDER_DELETED_SCHEMA },
    async handler({ ctx, params, query, principal, orgId, services, authorize }) {
      const withRules = query.forceDeleteRules;
      const decided = await findFolderTreeContents(services.db, orgId, params.uid, MAX_FOLDER_DELETE_ITEMS);
      // Past the bound the folder's own action is asked alone: the answer is 400 to whoever may delete it.
      const requires = decided ? deletionRequirements(decided, withRules) : [];
      await authorize('folders:delete', folderResource(params.uid), requires.length > 0 ? { requires } : {});
      if (!decided) throw tooManyToDelete(params.uid);
      const now = services.clock.now();
      const folder = await services.transact(async (tx) => {
        const current = await findFolderTreeContents(tx.db, orgId, params.uid, MAX_FOLDER_DELETE_ITEMS, 'update');
        assertDecidedOn(params.uid, current, decided);
        if (current.folders.length === 0) throw new NotFoundError(`folder ${params.uid} not found`);
        if (!withRules && current.alertRules.length > 0) {
          throw new BadRequestError(`folder ${params.uid} holds alert rules: delete them first or pass forceDeleteRules=true`);
        }
        await deleteFolderTree(tx, orgId, current);
        await recordAudits(tx.db, actorOf(ctx, principal), deletionAudits(orgId, current), now);
        return current.folders[0]!;
      });
      ctx.body = { message: 'Folder deleted', uid: folder.uid, title: folder.title };
    },
  });
};
