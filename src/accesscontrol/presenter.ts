/** Roles as the API shows them: a whitelist of fields, permissions sorted by action then scope. */
import type { Permission } from './builtin-roles.ts';
import type { AssignedRoleRow, RoleHoldersInOrg, RoleRow } from './store.ts';
import { listPageSchema } from '../http/responses.ts';

export function presentRole(row: RoleRow, permissions: Permission[]) {
  return {
    uid: row.uid,
    name: row.name,
    displayName: row.display_name,
    description: row.description,
    groupName: row.group_name,
    global: row.org_id === null,
    hidden: !!row.hidden,
    version: Number(row.version),
    permissions: permissions.map((p) => ({ action: p.action, scope: p.scope })),
  };
}

/** A role of a user or team, and whether it is assigned in every org (a global assignment). */
export function presentAssignedRole(row: AssignedRoleRow, permissions: Permission[]) {
  return { ...presentRole(row, permissions), globalAssignment: row.assignment_org_id === null };
}

const roleProperties = {
  uid: { type: 'string' },
  name: { type: 'string' },
  displayName: { type: 'string' },
  description: { type: 'string' },
  groupName: { type: 'string' },
  global: { type: 'boolean' },
  hidden: { type: 'boolean' },
  version: { type: 'integer', minimum: 1 },
  permissions: {
    type: 'array',
    items: { type: 'object', properties: { action: { type: 'string' }, scope: { type: 'string' } }, required: ['action', 'scope'] },
  },
} as const;

const roleFields = ['uid', 'name', 'displayName', 'description', 'groupName', 'global', 'hidden', 'version', 'permissions'] as const;

/** What presentRole answers. */
export const ROLE_SCHEMA = { type: 'object', properties: roleProperties, required: roleFields } as const;

/** What presentAssignedRole answers. */
export const ASSIGNED_ROLE_SCHEMA = {
  type: 'object',
  properties: { ...roleProperties, globalAssignment: { type: 'boolean' } },
  required: [...roleFields, 'globalAssignment'],
} as const;

export const ROLE_PAGE_SCHEMA = listPageSchema('roles', ROLE_SCHEMA);
export const ASSIGNED_ROLE_PAGE_SCHEMA = listPageSchema('roles', ASSIGNED_ROLE_SCHEMA);

/** A user's resolved permissions: `{action: [scope]}`. */
export const PERMISSION_MAP_SCHEMA = { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } as const;

/** Who holds a role in the org: users (`global`: by a global assignment), teams and service accounts. */
export function presentRoleHolders(roleUid: string, holders: RoleHoldersInOrg) {
  const people = holders.users.filter((u) => !u.serviceAccount);
  const accounts = holders.users.filter((u) => u.serviceAccount);
  return {
    roleUid,
    users: people.map((u) => ({ userId: u.id, login: u.login, name: u.name, global: u.global })),
    teams: holders.teams.map((t) => ({ teamId: t.id, name: t.name })),
    serviceAccounts: accounts.map((a) => ({ serviceAccountId: a.id, name: a.name, global: a.global })),
  };
}

const text = { type: 'string' } as const;
const flag = { type: 'boolean' } as const;

/** What presentRoleHolders answers. */
export const ROLE_HOLDERS_SCHEMA = {
  type: 'object',
  properties: {
    roleUid: text,
    users: {
      type: 'array',
      items: { type: 'object', properties: { userId: text, login: text, name: text, global: flag }, required: ['userId', 'login', 'name', 'global'] },
    },
    teams: { type: 'array', items: { type: 'object', properties: { teamId: text, name: text }, required: ['teamId', 'name'] } },
    serviceAccounts: {
      type: 'array',
      items: { type: 'object', properties: { serviceAccountId: text, name: text, global: flag }, required: ['serviceAccountId', 'name', 'global'] },
    },
  },
  required: ['roleUid', 'users', 'teams', 'serviceAccounts'],
} as const;
