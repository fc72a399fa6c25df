/**
 * The spec's permission levels (View 1, Edit 2, Admin 4) of a grant on a folder, as the actions
 * each holds on `folders:uid:<uid>`: the folder's own (which reach its subfolders and their
 * dashboards) and the alert rules' (which reach the rules in it and below).
 *
 * Two permission endpoints write grants on that scope, the folder's and the alert rules', each
 * storing only its own actions, so that each replaces and lists its own set. A folder grant
 * carries the alert-rule actions of its level too, as Grafana's folder levels hold them: the data
 * document adds them to the managed role that holds the folder grant (carryFolderGrants), so the
 * policy reads one uniform thing and what a stored grant means follows this file.
 */

export type PermissionLevel = 1 | 2 | 4;

export type LevelActions = Record<PermissionLevel, readonly string[]>;

/** Each level holds the actions of the one below and its own. */
export function ladder(view: readonly string[], edit: readonly string[], admin: readonly string[]): LevelActions {
  return { 1: view, 2: [...view, ...edit], 4: [...view, ...edit, ...admin] };
}

export const FOLDER_LEVELS = ladder(
  ['folders:read', 'dashboards:read'],
  ['folders:write', 'folders:delete', 'folders:create', 'dashboards:create', 'dashboards:write', 'dashboards:delete'],
  ['folders.permissions:read', 'folders.permissions:write', 'dashboards.permissions:read', 'dashboards.permissions:write'],
);

export const ALERT_RULE_LEVELS = ladder(
  ['alert.rules:read'],
  ['alert.rules:create', 'alert.rules:write', 'alert.rules:delete'],
  ['alert.rules.permissions:read', 'alert.rules.permissions:write'],
);

/** Everything a folder grant of each level gives: the folder's actions and those it carries for the alert rules. */
export const FOLDER_LEVELS_CARRIED: LevelActions = {
  1: [...FOLDER_LEVELS[1], ...ALERT_RULE_LEVELS[1]],
  2: [...FOLDER_LEVELS[2], ...ALERT_RULE_LEVELS[2]],
  4: [...FOLDER_LEVELS[4], ...ALERT_RULE_LEVELS[4]],
};

/** The highest level whose actions are all held; undefined when not even View's are. */
export function levelHeld(levels: LevelActions, holds: (action: string) => boolean): PermissionLevel | undefined {
  return ([4, 2, 1] as const).find((level) => levels[level].every(holds));
}

/**
 * Adds to a managed role's permissions (action -> scopes) the alert-rule actions of each folder
 * grant it holds, at the grant's level. Only managed roles hold grants: a custom or fixed role
 * holding `folders:read` means that action alone.
 */
export function carryFolderGrants(permissions: Record<string, Record<string, true>>): void {
  for (const scope of Object.keys(permissions['folders:read'] ?? {})) {
    if (!scope.startsWith('folders:uid:')) continue;
    const level = levelHeld(FOLDER_LEVELS, (action) => permissions[action]?.[scope] === true);
    if (!level) continue;
    for (const action of ALERT_RULE_LEVELS[level]) (permissions[action] ??= {})[scope] = true;
  }
}
