/**
 * `/api/search`, Grafana's search over folders (`dash-folder`) and dashboards (`dash-db`):
 * folders first, then dashboards, each by title, and only what the caller may read — one policy
 * call per kind answers the sets the caller may read (authz/visible), and SQL reads one page of
 * them with their count.
 */
import type { Knex } from 'knex';
import type { ListedKind, ResourceRef, VisibleSet } from '../authz/types.ts';
import { bindsVisible, type FolderFilter, type PageWindow } from '../db/search.ts';
import { listReadableFolders } from '../folders/listing.ts';
import { folderUrl } from '../folders/presenter.ts';
import { findFoldersByUids, type FolderRow } from '../folders/store.ts';
import { folderUidOf } from '../folders/target.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { dashboardUrl } from './presenter.ts';
import { findDashboardsByUids, findDashboardUids, findVisibleDashboardPage, type DashboardRow } from './store.ts';
import { dashboardResource } from './target.ts';
import { listPageSchema } from '../http/responses.ts';

interface DashboardAccess {
  visible(action: 'dashboards:read', kind: ListedKind): Promise<Readonly<VisibleSet>>;
  filter<T>(action: 'dashboards:read', items: readonly T[], resourceOf: (item: T) => ResourceRef): Promise<T[]>;
}

/** A page of the dashboards the caller may read, as listReadableFolders (src/folders/listing.ts) lists folders. */
async function listReadableDashboards(
  db: Knex,
  orgId: string,
  search: FolderFilter,
  page: PageWindow,
  access: DashboardAccess,
): Promise<{ totalCount: number; rows: DashboardRow[] }> {
  const visible = await access.visible('dashboards:read', 'dashboards');
  if (bindsVisible(visible)) return findVisibleDashboardPage(db, orgId, search, visible, page);
  const readable = await access.filter('dashboards:read', await findDashboardUids(db, orgId, search), dashboardResource);
  return { totalCount: readable.length, rows: await findDashboardsByUids(db, orgId, readable.slice(page.offset, page.offset + page.limit)) };
}

const NONE = { totalCount: 0, rows: [] };

/** A hit: a folder (`dash-folder`, with its parent) or a dashboard (`dash-db`, with its folder); root items have no folder fields. */
const SEARCH_HIT_SCHEMA = {
  type: 'object',
  properties: {
    uid: { type: 'string' },
    title: { type: 'string' },
    type: { enum: ['dash-folder', 'dash-db'] },
    url: { type: 'string' },
    folderUid: { type: 'string' },
    folderTitle: { type: 'string' },
    folderUrl: { type: 'string' },
  },
  required: ['uid', 'title', 'type', 'url'],
} as const;

const SEARCH_PAGE_SCHEMA = listPageSchema('hits', SEARCH_HIT_SCHEMA);

export const dashboardSearchRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/search',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      properties: {
        ...paginationQuerySchema,
        query: { type: 'string', maxLength: 190 },
        type: { type: 'string', enum: ['dash-db', 'dash-folder'] },
        // comma-separated; `general` is the root
        folderUIDs: { type: 'string', maxLength: 4000 },
      },
      additionalProperties: false,
    },
    summary: 'Searches the folders, then the dashboards, the caller may read, by title.',
    responses: { 200: SEARCH_PAGE_SCHEMA },
    async handler({ ctx, query, orgId, services, authorize, filter, visible }) {
      await authorize(query.type === 'dash-folder' ? 'folders:read' : 'dashboards:read');
      const page = pageOf(query);
      const search = {
        search: query.query?.trim(),
        folderUids: query.folderUIDs === undefined ? undefined : query.folderUIDs.split(',').map((uid) => folderUidOf(uid.trim())),
      };
      const access = { visible, filter };
      const folderPage: { totalCount: number; rows: FolderRow[] } =
        query.type === 'dash-db' ? NONE : await listReadableFolders(services.db, orgId, search, page, access);
      // the page runs on from the folders into the dashboards
      const dashboardOffset = Math.max(0, page.offset - folderPage.totalCount);
      const dashboardWindow = { offset: dashboardOffset, limit: Math.max(0, page.offset + page.limit - folderPage.totalCount) - dashboardOffset };
      const dashboardPage: { totalCount: number; rows: DashboardRow[] } =
        query.type === 'dash-folder' ? NONE : await listReadableDashboards(services.db, orgId, search, dashboardWindow, access);
      const folders = folderPage.rows;
      const dashboards = dashboardPage.rows;
      const parentUids = [...new Set(dashboards.map((d) => d.folder_uid).filter((uid): uid is string => uid !== null))];
      const parents = new Map((await findFoldersByUids(services.db, orgId, parentUids)).map((folder) => [folder.uid, folder]));
      const hits = [
        ...folders.map((folder) => ({
          uid: folder.uid,
          title: folder.title,
          type: 'dash-folder',
          url: folderUrl(folder.uid),
          folderUid: folder.parent_uid ?? undefined,
        })),
        ...dashboards.map((dashboard) => {
          const parent = dashboard.folder_uid ? parents.get(dashboard.folder_uid) : undefined;
          return {
            uid: dashboard.uid,
            title: dashboard.title,
            type: 'dash-db',
            url: dashboardUrl(dashboard),
            folderUid: parent?.uid,
            folderTitle: parent?.title,
            folderUrl: parent && folderUrl(parent.uid),
          };
        }),
      ];
      ctx.body = { totalCount: folderPage.totalCount + dashboardPage.totalCount, hits, page: page.page, perPage: page.perPage };
    },
  });
};
