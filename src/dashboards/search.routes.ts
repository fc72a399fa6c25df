/**
 * `/api/search`, Grafana's search over folders (`dash-folder`) and dashboards (`dash-db`):
 * folders first, then dashboards, each by title, and only what the caller may read — one policy
 * `filter` call per kind over every match, then the page.
 */
import { folderUrl } from '../folders/presenter.ts';
import { findFolderUids, findFoldersByUids } from '../folders/store.ts';
import { folderResource, folderUidOf } from '../folders/target.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { dashboardUrl } from './presenter.ts';
import { findDashboardsByUids, findDashboardUids } from './store.ts';
import { dashboardResource } from './target.ts';
import { listPageSchema } from '../http/responses.ts';

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
    async handler({ ctx, query, orgId, services, authorize, filter: readable }) {
      await authorize(query.type === 'dash-folder' ? 'folders:read' : 'dashboards:read');
      const page = pageOf(query);
      const search = {
        search: query.query?.trim(),
        folderUids: query.folderUIDs === undefined ? undefined : query.folderUIDs.split(',').map((uid) => folderUidOf(uid.trim())),
      };
      const [folderUids, dashboardUids] = await Promise.all([
        query.type === 'dash-db' ? [] : findFolderUids(services.db, orgId, search).then((uids) => readable('folders:read', uids, folderResource)),
        query.type === 'dash-folder' ? [] : findDashboardUids(services.db, orgId, search).then((uids) => readable('dashboards:read', uids, dashboardResource)),
      ]);
      const pageFolderUids = folderUids.slice(page.offset, page.offset + page.limit);
      // the page runs on from the folders into the dashboards
      const pageDashboardUids = dashboardUids.slice(Math.max(0, page.offset - folderUids.length), Math.max(0, page.offset + page.limit - folderUids.length));
      const [folders, dashboards] = await Promise.all([
        findFoldersByUids(services.db, orgId, pageFolderUids),
        findDashboardsByUids(services.db, orgId, pageDashboardUids),
      ]);
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
      ctx.body = { totalCount: folderUids.length + dashboardUids.length, hits, page: page.page, perPage: page.perPage };
    },
  });
};
