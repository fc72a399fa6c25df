/**
 * The spec's permission levels (View 1, Edit 2, Admin 4) as the actions a managed grant holds on
 * one scope. Each permission endpoint manages one family of actions on its scope, so the
 * folder's own grants and the alert-rule grants of the same folder (both on `folders:uid:<uid>`)
 * stay apart: replacing one set never touches the other.
 */
export type PermissionLevel = 1 | 2 | 4;

export const LEVEL_NAMES: Record<PermissionLevel, 'View' | 'Edit' | 'Admin'> = { 1: 'View', 2: 'Edit', 4: 'Admin' };

export interface GrantFamily {
  /** What the audit log and messages call the resource. */
  noun: 'folder' | 'dashboard' | 'alert rules' | 'connector';
  scopeOf(uid: string): string;
  /** The actions each level holds on the scope, each level including the one below. */
  levels: Record<PermissionLevel, readonly string[]>;
}

function ladder(view: readonly string[], edit: readonly string[], admin: readonly string[]): Record<PermissionLevel, readonly string[]> {
  return { 1: view, 2: [...view, ...edit], 4: [...view, ...edit, ...admin] };
}

/** A folder's grants reach its subfolders, and its dashboards through the dashboard actions. */
export const FOLDER_GRANTS: GrantFamily = {
  noun: 'folder',
  scopeOf: (uid) => `folders:uid:${uid}`,
  levels: ladder(
    ['folders:read', 'dashboards:read'],
    ['folders:write', 'folders:delete', 'folders:create', 'dashboards:create', 'dashboards:write', 'dashboards:delete'],
    ['folders.permissions:read', 'folders.permissions:write', 'dashboards.permissions:read', 'dashboards.permissions:write'],
  ),
};

export const DASHBOARD_GRANTS: GrantFamily = {
  noun: 'dashboard',
  scopeOf: (uid) => `dashboards:uid:${uid}`,
  levels: ladder(['dashboards:read'], ['dashboards:write', 'dashboards:delete'], ['dashboards.permissions:read', 'dashboards.permissions:write']),
};

/** Alert rules are folder-scoped: these grants name the folder and reach every rule in it and below. */
export const ALERT_RULE_GRANTS: GrantFamily = {
  noun: 'alert rules',
  scopeOf: (uid) => `folders:uid:${uid}`,
  levels: ladder(
    ['alert.rules:read'],
    ['alert.rules:create', 'alert.rules:write', 'alert.rules:delete'],
    ['alert.rules.permissions:read', 'alert.rules.permissions:write'],
  ),
};

/**
 * Flat: a connector inherits from nothing. Any grant on a connector also narrows who may query
 * it: from then on only a grant on it (or "*") lets one query (the policy's is_narrowed).
 */
export const CONNECTOR_GRANTS: GrantFamily = {
  noun: 'connector',
  scopeOf: (uid) => `connectors:uid:${uid}`,
  levels: ladder(['connectors:read', 'connectors:query'], ['connectors:write'], ['connectors.permissions:read', 'connectors.permissions:write']),
};

/** Every action of the family: what a replacement of its grants clears. */
export const familyActions = (family: GrantFamily): readonly string[] => family.levels[4];

/** The highest level whose actions are all held; undefined when not even View's are. */
export function levelOf(family: GrantFamily, held: ReadonlySet<string>): PermissionLevel | undefined {
  return ([4, 2, 1] as const).find((level) => family.levels[level].every((action) => held.has(action)));
}
