/** SQL of roles and their permissions. */
import type { Knex } from 'knex';
import type { Permission, RoleDefinition } from './builtin-roles.ts';

export interface RoleRow {
  id: number;
  uid: string;
  org_id: string | null;
  name: string;
  display_name: string;
  description: string;
  group_name: string;
  hidden: boolean | number;
  version: number;
}

export function rolesInScope(db: Knex, orgId: string | null): Knex.QueryBuilder {
  return orgId ? db('roles').where('org_id', orgId) : db('roles').whereNull('org_id');
}

export async function findPermissionsByRoleIds(db: Knex, roleIds: number[]): Promise<Map<number, Permission[]>> {
  const byRole = new Map<number, Permission[]>(roleIds.map((id) => [id, []]));
  if (roleIds.length === 0) return byRole;
  const rows: Array<{ role_id: number; action: string; scope: string }> = await db('role_permissions')
    .whereIn('role_id', roleIds)
    .orderBy(['action', 'scope'])
    .select('role_id', 'action', 'scope');
  for (const row of rows) byRole.get(row.role_id)?.push({ action: row.action, scope: row.scope });
  return byRole;
}

export async function insertRole(db: Knex, orgId: string | null, role: RoleDefinition, now: number, hidden = false): Promise<number> {
  const [id] = await db('roles').insert({
    uid: role.uid,
    org_id: orgId,
    name: role.name,
    display_name: role.displayName,
    description: role.description,
    group_name: role.groupName,
    hidden,
    version: 1,
    created_at: now,
    updated_at: now,
  });
  await replaceRolePermissions(db, Number(id), role.permissions);
  return Number(id);
}

export async function replaceRolePermissions(db: Knex, roleId: number, permissions: Permission[]): Promise<void> {
  await db('role_permissions').where('role_id', roleId).delete();
  const unique = new Map(permissions.map((p) => [`${p.action}\u0000${p.scope}`, p]));
  const rows = [...unique.values()].map((p) => ({ role_id: roleId, action: p.action, scope: p.scope }));
  for (let i = 0; i < rows.length; i += 500) await db('role_permissions').insert(rows.slice(i, i + 500));
}
