/** Folders as the API shows them, in Grafana's field names. */
import type { FolderRow } from './store.ts';

export const folderUrl = (uid: string) => `/dashboards/f/${uid}/`;

export function presentFolder(folder: FolderRow) {
  return {
    uid: folder.uid,
    orgId: folder.org_id,
    title: folder.title,
    description: folder.description,
    parentUid: folder.parent_uid ?? undefined,
    url: folderUrl(folder.uid),
    createdBy: folder.created_by ?? undefined,
    created: new Date(Number(folder.created_at)).toISOString(),
    updatedBy: folder.updated_by ?? undefined,
    updated: new Date(Number(folder.updated_at)).toISOString(),
  };
}
