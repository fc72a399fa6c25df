/** Roles as the API shows them: a whitelist of fields, permissions sorted by action then scope. */
import type { Permission } from './builtin-roles.ts';
import type { AssignedRoleRow, RoleRow } from './store.ts';
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
