import type { Action } from '../authz/actions.ts';

/**
 * The roles every org is seeded with: the four basic roles (carried by the org role) and the
 * 57 fixed roles, narrow bundles an admin can assign. Definitions only; seed.ts writes them.
 */
export interface Permission {
  action: string;
  scope: string;
}

export interface RoleDefinition {
  uid: string;
  name: string;
  displayName: string;
  description: string;
  groupName: string;
  permissions: Permission[];
}

/** The hidden roles that carry a user's or a team's resource grants and team-admin rights. */
export const managedUserRoleUid = (userId: string) => `managed:users:${userId}:permissions`;
export const managedTeamRoleUid = (teamId: string) => `managed:teams:${teamId}:permissions`;
/** The hidden role that carries the grants given to everyone of an org role (`role: Viewer` in a grant). */
export const managedBuiltinRoleUid = (role: string) => `managed:builtins:${role.toLowerCase()}:permissions`;

function grant(scope: string, ...actions: (Action | '*')[]): Permission[] {
  return actions.map((action) => ({ action, scope }));
}

const VIEWER: Permission[] = [
  ...grant('dashboards:*', 'dashboards:read'),
  ...grant('folders:*', 'folders:read', 'dashboards:read', 'alert.rules:read', 'alert.silences:read'),
  ...grant('teams:*', 'teams:read'),
  ...grant('annotations:*', 'annotations:read'),
  ...grant('orgs:*', 'orgs.preferences:read'),
  ...grant('investigations:*', 'investigations:read'),
  // who may query a connector is said by the grants on it: a new one grants Viewer and Editor
  // View (src/permissions/levels.ts, DEFAULT_CONNECTOR_GRANTS), which its admins may take away
  ...grant('connectors:*', 'connectors:read', 'connectors:explore'),
  ...grant('*', 'chat:use'),
];

const EDITOR_ADDS: Permission[] = [
  ...grant('dashboards:*', 'dashboards:create', 'dashboards:write', 'dashboards:delete'),
  ...grant('folders:*', 'folders:create', 'folders:write', 'folders:delete', 'dashboards:create', 'dashboards:write', 'dashboards:delete'),
  ...grant('annotations:*', 'annotations:create', 'annotations:write', 'annotations:delete'),
  ...grant('folders:*', 'alert.rules:create', 'alert.rules:write', 'alert.rules:delete', 'alert.silences:create', 'alert.silences:write'),
  ...grant('investigations:*', 'investigations:create', 'investigations:write', 'investigations:delete'),
];

const ADMIN_ADDS: Permission[] = [
  ...grant('users:*', 'org.users:read', 'org.users:write', 'org.users:add', 'org.users:remove'),
  ...grant('teams:*', 'teams:create', 'teams:write', 'teams:delete', 'team.permissions:read', 'team.permissions:write'),
  ...grant('serviceaccounts:*', 'serviceaccounts:create', 'serviceaccounts:read', 'serviceaccounts:write', 'serviceaccounts:delete'),
  ...grant('roles:*', 'roles:read', 'roles:write', 'roles:delete'),
  ...grant('connectors:*', 'connectors:create', 'connectors:write', 'connectors:delete', 'connectors.permissions:read', 'connectors.permissions:write'),
  ...grant('folders:*', 'folders.permissions:read', 'folders.permissions:write', 'dashboards.permissions:read', 'dashboards.permissions:write'),
  ...grant('dashboards:*', 'dashboards.permissions:read', 'dashboards.permissions:write'),
  ...grant('folders:*', 'alert.rules.permissions:read', 'alert.rules.permissions:write'),
  ...grant('*', 'alert.provisioning:read', 'alert.provisioning:write'),
  ...grant('orgs:*', 'orgs:read', 'orgs:write', 'orgs.preferences:write', 'orgs.quotas:read', 'orgs.quotas:write'),
  // the org admin holds everything within its org; server-level actions stay with server admins
  ...grant('*', '*'),
];

function basic(name: string, displayName: string, description: string, permissions: Permission[]): RoleDefinition {
  return { uid: `basic:${name}`, name: `basic:${name}`, displayName, description, groupName: 'Basic', permissions };
}

export const BASIC_ROLES: RoleDefinition[] = [
  basic(
    'viewer',
    'Viewer',
    'Reads dashboards, folders, teams, annotations, alert rules, org preferences and investigations; queries the connectors that grant Viewer; uses chat.',
    VIEWER,
  ),
  basic('editor', 'Editor', 'Viewer plus creating, changing and deleting dashboards, folders, annotations, alert rules and silences.', [
    ...VIEWER,
    ...EDITOR_ADDS,
  ]),
  basic('admin', 'Admin', 'Editor plus managing the org: users, teams, service accounts, roles, connectors, permissions, settings and quotas.', [
    ...VIEWER,
    ...EDITOR_ADDS,
    ...ADMIN_ADDS,
  ]),
  basic('server_admin', 'Server admin', 'Everything on every scope, including cross-org actions; reaches an org only as its member.', grant('*', '*')),
];

type FixedSpec = [area: string, level: string, description: string, permissions: Permission[]];

const FIXED: FixedSpec[] = [
  ['dashboards', 'reader', 'Read all dashboards.', grant('dashboards:*', 'dashboards:read')],
  ['dashboards', 'creator', 'Create dashboards in any folder.', grant('folders:*', 'dashboards:create', 'folders:read')],
  [
    'dashboards',
    'writer',
    'Read, write, create and delete all dashboards and manage their permissions.',
    grant(
      'dashboards:*',
      'dashboards:read',
      'dashboards:write',
      'dashboards:create',
      'dashboards:delete',
      'dashboards.permissions:read',
      'dashboards.permissions:write',
    ),
  ],
  ['dashboards.permissions', 'reader', 'Read the permissions of all dashboards.', grant('dashboards:*', 'dashboards.permissions:read')],
  [
    'dashboards.permissions',
    'writer',
    'Read and change the permissions of all dashboards.',
    grant('dashboards:*', 'dashboards.permissions:read', 'dashboards.permissions:write'),
  ],
  ['folders', 'reader', 'Read all folders.', grant('folders:*', 'folders:read')],
  ['folders', 'creator', 'Create folders.', grant('folders:*', 'folders:create')],
  [
    'folders',
    'writer',
    'Read, write, create and delete all folders and manage their permissions.',
    grant('folders:*', 'folders:read', 'folders:write', 'folders:create', 'folders:delete', 'folders.permissions:read', 'folders.permissions:write'),
  ],
  ['folders.permissions', 'reader', 'Read the permissions of all folders.', grant('folders:*', 'folders.permissions:read')],
  [
    'folders.permissions',
    'writer',
    'Read and change the permissions of all folders.',
    grant('folders:*', 'folders.permissions:read', 'folders.permissions:write'),
  ],
  ['annotations', 'reader', 'Read all annotations.', grant('annotations:*', 'annotations:read')],
  [
    'annotations',
    'writer',
    'Read, create, change and delete all annotations.',
    grant('annotations:*', 'annotations:read', 'annotations:create', 'annotations:write', 'annotations:delete'),
  ],
  ['alert.rules', 'reader', 'Read alert rules in every folder.', grant('folders:*', 'alert.rules:read', 'folders:read')],
  [
    'alert.rules',
    'writer',
    'Read, create, change and delete alert rules in every folder.',
    grant('folders:*', 'alert.rules:read', 'alert.rules:create', 'alert.rules:write', 'alert.rules:delete', 'folders:read'),
  ],
  ['alert.silences', 'reader', 'Read alert silences.', grant('folders:*', 'alert.silences:read')],
  ['alert.silences', 'creator', 'Read and create alert silences.', grant('folders:*', 'alert.silences:read', 'alert.silences:create')],
  [
    'alert.silences',
    'writer',
    'Read, create and change alert silences.',
    grant('folders:*', 'alert.silences:read', 'alert.silences:create', 'alert.silences:write'),
  ],
  ['alert.provisioning', 'reader', 'Read alerting provisioning.', grant('*', 'alert.provisioning:read')],
  ['alert.provisioning', 'writer', 'Read and write alerting provisioning.', grant('*', 'alert.provisioning:read', 'alert.provisioning:write')],
  ['alert.notifications', 'reader', 'Read contact points and notification policies.', grant('*', 'alert.notifications:read')],
  [
    'alert.notifications',
    'writer',
    'Read and change contact points and notification policies.',
    grant('*', 'alert.notifications:read', 'alert.notifications:write'),
  ],
  ['connectors', 'reader', 'Read all connectors.', grant('connectors:*', 'connectors:read')],
  ['connectors', 'explorer', 'Read, query and explore all connectors.', grant('connectors:*', 'connectors:read', 'connectors:query', 'connectors:explore')],
  ['connectors', 'creator', 'Create connectors.', grant('connectors:*', 'connectors:create')],
  [
    'connectors',
    'writer',
    'Read, query, create, change and delete all connectors.',
    grant('connectors:*', 'connectors:read', 'connectors:query', 'connectors:create', 'connectors:write', 'connectors:delete'),
  ],
  ['connectors.permissions', 'reader', 'Read the permissions of all connectors.', grant('connectors:*', 'connectors.permissions:read')],
  [
    'connectors.permissions',
    'writer',
    'Read and change the permissions of all connectors.',
    grant('connectors:*', 'connectors.permissions:read', 'connectors.permissions:write'),
  ],
  ['users', 'reader', 'Read every user of the server.', grant('global.users:*', 'users:read')],
  [
    'users',
    'writer',
    'Read, create, change, disable, enable and delete every user of the server.',
    grant('global.users:*', 'users:read', 'users:create', 'users:write', 'users:delete', 'users:disable', 'users:enable'),
  ],
  ['org.users', 'reader', 'Read the users of the org.', grant('users:*', 'org.users:read')],
  [
    'org.users',
    'writer',
    'Read, add, re-role and remove the users of the org.',
    grant('users:*', 'org.users:read', 'org.users:add', 'org.users:write', 'org.users:remove'),
  ],
  ['teams', 'reader', 'Read all teams.', grant('teams:*', 'teams:read')],
  ['teams', 'creator', 'Create teams.', grant('teams:*', 'teams:create')],
  [
    'teams',
    'writer',
    'Create, read, change and delete all teams and their members.',
    grant('teams:*', 'teams:create', 'teams:read', 'teams:write', 'teams:delete', 'team.permissions:read', 'team.permissions:write'),
  ],
  ['serviceaccounts', 'reader', 'Read all service accounts.', grant('serviceaccounts:*', 'serviceaccounts:read')],
  ['serviceaccounts', 'creator', 'Create service accounts.', grant('serviceaccounts:*', 'serviceaccounts:create')],
  [
    'serviceaccounts',
    'writer',
    'Create, read, change and delete all service accounts and their tokens.',
    grant('serviceaccounts:*', 'serviceaccounts:create', 'serviceaccounts:read', 'serviceaccounts:write', 'serviceaccounts:delete'),
  ],
  ['roles', 'reader', 'Read roles and role assignments.', grant('roles:*', 'roles:read')],
  ['roles', 'writer', 'Create, change, delete and assign custom roles.', grant('roles:*', 'roles:read', 'roles:write', 'roles:delete')],
  ['orgs', 'reader', 'Read the org.', grant('orgs:*', 'orgs:read')],
  ['orgs', 'writer', 'Read and change the org.', grant('orgs:*', 'orgs:read', 'orgs:write')],
  ['orgs', 'creator', 'Create orgs.', grant('*', 'orgs:create')],
  ['orgs.preferences', 'reader', 'Read the org preferences.', grant('orgs:*', 'orgs.preferences:read')],
  ['orgs.preferences', 'writer', 'Read and change the org preferences.', grant('orgs:*', 'orgs.preferences:read', 'orgs.preferences:write')],
  ['orgs.quotas', 'reader', 'Read the org quotas.', grant('orgs:*', 'orgs.quotas:read')],
  ['orgs.quotas', 'writer', 'Read and change the org quotas.', grant('orgs:*', 'orgs.quotas:read', 'orgs.quotas:write')],
  ['users.quotas', 'reader', 'Read user quotas.', grant('global.users:*', 'users.quotas:read')],
  ['users.quotas', 'writer', 'Read and change user quotas.', grant('global.users:*', 'users.quotas:read', 'users.quotas:write')],
  ['settings', 'reader', 'Read the runtime settings.', grant('settings:*', 'settings:read')],
  ['settings', 'writer', 'Read and change the runtime settings.', grant('settings:*', 'settings:read', 'settings:write')],
  ['server.stats', 'reader', 'Read server statistics.', grant('*', 'server.stats:read')],
  ['audit', 'reader', 'Read the audit log.', grant('*', 'audit:read')],
  ['investigations', 'reader', 'Read investigations.', grant('investigations:*', 'investigations:read')],
  [
    'investigations',
    'writer',
    'Read, create, change and delete investigations.',
    grant('investigations:*', 'investigations:read', 'investigations:create', 'investigations:write', 'investigations:delete'),
  ],
  ['chat', 'user', 'Use the chat agent.', grant('*', 'chat:use')],
  ['scim', 'provisioner', 'Provision users and teams through SCIM (/scim/v2): a service account only.', grant('*', 'scim:read', 'scim:write')],
  ['authentication.config', 'writer', 'Read and change the login provider settings.', grant('settings:auth:*', 'settings:read', 'settings:write')],
];

const title = (text: string) => text.replace(/[._]/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());

export const FIXED_ROLES: RoleDefinition[] = FIXED.map(([area, level, description, permissions]) => ({
  uid: `fixed:${area}:${level}`,
  name: `fixed:${area}:${level}`,
  displayName: `${title(area)} ${title(level)}`,
  description,
  groupName: title(area.split('.')[0]!),
  permissions,
}));
