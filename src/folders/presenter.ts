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

/** What presentFolder sends; the optional fields are left out when the row has none. */
export const FOLDER_SCHEMA = {
  type: 'object',
  properties: {
    uid: { type: 'string' },
    orgId: { type: 'string' },
    title: { type: 'string' },
    description: { type: 'string' },
    parentUid: { type: 'string' },
    url: { type: 'string' },
    createdBy: { type: 'string' },
    created: { type: 'string' },
    updatedBy: { type: 'string' },
    updated: { type: 'string' },
  },
  required: ['uid', 'orgId', 'title', 'description', 'url', 'created', 'updated'],
} as const;
