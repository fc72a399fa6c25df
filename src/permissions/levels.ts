/**
 * The spec's permission levels (View 1, Edit 2, Admin 4) as the actions a managed grant holds on
 * one scope. Each permission endpoint manages one family of actions on its scope, so the
 * folder's own grants and the alert-rule grants of the same folder (both on `folders:uid:<uid>`)
 * stay apart: replacing one set never touches the other. A folder grant carries the alert-rule
 * actions of its level as well (authz/grant-levels.ts): what it gives is more than it stores.
 */
import { ALERT_RULE_LEVELS, FOLDER_LEVELS, FOLDER_LEVELS_CARRIED, ladder, levelHeld, type LevelActions, type PermissionLevel } from '../authz/grant-levels.ts';

export type { PermissionLevel };

export const LEVEL_NAMES: Record<PermissionLevel, 'View' | 'Edit' | 'Admin'> = { 1: 'View', 2: 'Edit', 4: 'Admin' };

export interface GrantFamily {
  /** What the audit log and messages call the resource. */
  noun: 'folder' | 'dashboard' | 'alert rules' | 'connector';
  scopeOf(uid: string): string;
  /** The actions each level stores on the scope, each level including the one below. */
  levels: LevelActions;
  /** What each level gives, when more than it stores (the policy document adds the rest). */
  gives?: LevelActions;
}

/**
 * A folder's grants reach its subfolders, its dashboards through the dashboard actions, and the
 * alert rules in it and below through the alert-rule actions they carry.
 */
export const FOLDER_GRANTS: GrantFamily = {
  noun: 'folder',
  scopeOf: (uid) => `folders:uid:${uid}`,
  levels: FOLDER_LEVELS,
  gives: FOLDER_LEVELS_CARRIED,
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
  levels: ALERT_RULE_LEVELS,
};

/**
 * Flat: a connector inherits from nothing, and who may query it is said by its grants alone
 * (no basic role queries every connector): a new one starts with DEFAULT_CONNECTOR_GRANTS.
 */
export const CONNECTOR_GRANTS: GrantFamily = {
  noun: 'connector',
  scopeOf: (uid) => `connectors:uid:${uid}`,
  levels: ladder(['connectors:read', 'connectors:query'], ['connectors:write'], ['connectors.permissions:read', 'connectors.permissions:write']),
};

/**
 * The grants a connector is created with, as Grafana gives a data source: every Viewer and every
 * Editor may query it (View), until someone takes these entries away; Admins hold "*" anyway.
 */
export const DEFAULT_CONNECTOR_GRANTS = [
  { role: 'Viewer', permission: 1 },
  { role: 'Editor', permission: 1 },
] as const satisfies ReadonlyArray<{ role: 'Viewer' | 'Editor' | 'Admin'; permission: PermissionLevel }>;

/** Every action of the family: what a replacement of its grants clears. */
export const familyActions = (family: GrantFamily): readonly string[] => family.levels[4];

/** Everything a grant of the level gives on the scope: what it stores and what that carries. */
export const levelGives = (family: GrantFamily, level: PermissionLevel): readonly string[] => (family.gives ?? family.levels)[level];

/** The highest level whose stored actions are all held; undefined when not even View's are. */
export function levelOf(family: GrantFamily, held: ReadonlySet<string>): PermissionLevel | undefined {
  return levelHeld(family.levels, (action) => held.has(action));
}
