/** Dashboards as the API shows them, in Grafana's field names. */
import type { FolderRow } from '../folders/store.ts';
import type { DashboardRow } from './store.ts';

/** Grafana's URL slug: the title in lower case, runs of anything but letters and digits as one `-`. */
export function slugOf(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
}

export const dashboardUrl = (dashboard: { uid: string; title: string }) => `/d/${dashboard.uid}/${slugOf(dashboard.title)}`;

/** The stored model with the fields kept in columns put back. */
export function dashboardModel(dashboard: DashboardRow): Record<string, unknown> {
  const model = dashboard.data ? (JSON.parse(dashboard.data) as Record<string, unknown>) : {};
  return { ...model, uid: dashboard.uid, title: dashboard.title, version: dashboard.version };
}

export interface DashboardRights {
  canEdit: boolean;
  canAdmin: boolean;
  canDelete: boolean;
}

export function presentDashboard(dashboard: DashboardRow, folder: FolderRow | undefined, rights: DashboardRights) {
  return {
    dashboard: dashboardModel(dashboard),
    meta: {
      slug: slugOf(dashboard.title),
      url: dashboardUrl(dashboard),
      folderUid: dashboard.folder_uid ?? '',
      folderTitle: folder?.title ?? 'General',
      canSave: rights.canEdit,
      canEdit: rights.canEdit,
      canAdmin: rights.canAdmin,
      canDelete: rights.canDelete,
      version: dashboard.version,
      created: new Date(Number(dashboard.created_at)).toISOString(),
      createdBy: dashboard.created_by ?? undefined,
      updated: new Date(Number(dashboard.updated_at)).toISOString(),
      updatedBy: dashboard.updated_by ?? undefined,
    },
  };
}

/** What presentDashboard sends: the model (free-form JSON, with its uid, title and version) and its meta. */
export const DASHBOARD_SCHEMA = {
  type: 'object',
  properties: {
    dashboard: {
      type: 'object',
      properties: { uid: { type: 'string' }, title: { type: 'string' }, version: { type: 'integer' } },
      required: ['uid', 'title', 'version'],
      additionalProperties: true,
    },
    meta: {
      type: 'object',
      properties: {
        slug: { type: 'string' },
        url: { type: 'string' },
        folderUid: { type: 'string', description: 'empty for the root' },
        folderTitle: { type: 'string' },
        canSave: { type: 'boolean' },
        canEdit: { type: 'boolean' },
        canAdmin: { type: 'boolean' },
        canDelete: { type: 'boolean' },
        version: { type: 'integer' },
        created: { type: 'string' },
        createdBy: { type: 'string' },
        updated: { type: 'string' },
        updatedBy: { type: 'string' },
      },
      required: ['slug', 'url', 'folderUid', 'folderTitle', 'canSave', 'canEdit', 'canAdmin', 'canDelete', 'version', 'created', 'updated'],
    },
  },
  required: ['dashboard', 'meta'],
} as const;

/** A saved dashboard as Grafana's `POST /api/dashboards/db` answers it. */
export const DASHBOARD_SAVED_SCHEMA = {
  type: 'object',
  properties: {
    uid: { type: 'string' },
    url: { type: 'string' },
    slug: { type: 'string' },
    status: { const: 'success' },
    version: { type: 'integer' },
    folderUid: { type: 'string', description: 'empty for the root' },
  },
  required: ['uid', 'url', 'slug', 'status', 'version', 'folderUid'],
} as const;
