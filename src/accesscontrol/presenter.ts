/** Roles as the API shows them: a whitelist of fields, permissions sorted by action then scope. */
import type { Permission } from './builtin-roles.ts';
import type { AssignedRoleRow, RoleRow } from './store.ts';

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
