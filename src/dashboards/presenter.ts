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
