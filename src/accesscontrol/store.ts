/** SQL of roles and their permissions. */
import type { Knex } from 'knex';
import { managedUserRoleUid, type Permission, type RoleDefinition } from './builtin-roles.ts';

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

export async function findRoleById(db: Knex, id: number): Promise<RoleRow | undefined> {
  return db('roles').where('id', id).first();
}

/** The role `uid` as the org sees it: its own role of that uid, else the global one. */
export async function findRoleVisibleInOrg(db: Knex, orgId: string, uid: string): Promise<RoleRow | undefined> {
  return db('roles')
    .where('uid', uid)
    .where((q) => q.where('org_id', orgId).orWhereNull('org_id'))
    .orderByRaw('CASE WHEN org_id IS NULL THEN 1 ELSE 0 END')
    .first();
}

export async function findGlobalRole(db: Knex, uid: string): Promise<RoleRow | undefined> {
  return rolesInScope(db, null).where('uid', uid).first();
}

/**
 * Whether `uid` is taken where a new role would clash: an org role clashes with the org's roles
 * and the global ones, a global role with every role. The policy document keys roles by uid
 * alone, so one uid must never name two roles an org can see.
 */
export async function isRoleUidTaken(db: Knex, orgId: string | null, uid: string): Promise<boolean> {
  const query = db('roles').where('uid', uid);
  if (orgId) query.where((q) => q.where('org_id', orgId).orWhereNull('org_id'));
  return !!(await query.first('id'));
}

/** The roles an org sees (its own, then the global ones it has no role of the same uid for), by uid. */
export async function findRolesPageInOrg(
  db: Knex,
  orgId: string,
  includeHidden: boolean,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: RoleRow[] }> {
  const visible = () => {
    const query = db('roles').where((q) =>
      q.where('org_id', orgId).orWhere((global) => global.whereNull('org_id').whereNotIn('uid', db('roles').where('org_id', orgId).select('uid'))),
    );
    if (!includeHidden) query.where('hidden', false);
    return query;
  };
  const [countRow] = await visible().count<Array<{ total: number | string }>>({ total: '*' });
  const rows: RoleRow[] = await visible()
    .orderBy([{ column: 'uid' }, { column: 'id' }])
    .limit(page.limit)
    .offset(page.offset)
    .select('*');
  return { totalCount: Number(countRow?.total ?? 0), rows };
}

export interface RoleFields {
  name: string;
  displayName: string;
  description: string;
  groupName: string;
}

/**
 * Updates the role only if it is still at `version` and bumps it, in one statement: of two
 * writers that read the same version exactly one matches. Returns whether it did.
 */
export async function updateRoleAtVersion(db: Knex, roleId: number, version: number, fields: RoleFields, now: number): Promise<boolean> {
  const updated = await db('roles')
    .where({ id: roleId, version })
    .update({
      name: fields.name,
      display_name: fields.displayName,
      description: fields.description,
      group_name: fields.groupName,
      version: db.raw('version + 1'),
      updated_at: now,
    });
  return updated === 1;
}

/** Deletes the role with its permissions and every assignment of it. */
export async function deleteRole(db: Knex, roleId: number): Promise<void> {
  await db('user_roles').where('role_id', roleId).delete();
  await db('team_roles').where('role_id', roleId).delete();
  await db('role_permissions').where('role_id', roleId).delete();
  await db('roles').where('id', roleId).delete();
}

/**
 * Whose roles an assignment changes: a user in one org, a user everywhere (`orgId` null: a
 * global assignment), or a team (always of one org).
 */
export type AssigneeRef = { kind: 'user'; userId: string; orgId: string | null } | { kind: 'team'; teamId: string };

export interface AssignedRoleRow extends RoleRow {
  /** The assignment's org: null for a global assignment (teams: always their org). */
  assignment_org_id: string | null;
}

/** The roles assigned to a user in an org (`withGlobal`: and its global assignments) or to a team. */
export async function findAssignedRoles(db: Knex, assignee: AssigneeRef, withGlobal = false): Promise<AssignedRoleRow[]> {
  if (assignee.kind === 'team') {
    return db('team_roles as a')
      .join('roles as r', 'r.id', 'a.role_id')
      .join('teams as t', 't.id', 'a.team_id')
      .where('a.team_id', assignee.teamId)
      .orderBy('r.uid')
      .select('r.*', 't.org_id as assignment_org_id');
  }
  const query = db('user_roles as a').join('roles as r', 'r.id', 'a.role_id').where('a.user_id', assignee.userId);
  query.where((q) => {
    if (assignee.orgId) q.where('a.org_id', assignee.orgId);
    else q.whereNull('a.org_id');
    if (withGlobal) q.orWhereNull('a.org_id');
  });
  return query.orderBy([{ column: 'r.uid' }, { column: 'a.org_id' }]).select('r.*', 'a.org_id as assignment_org_id');
}

export async function insertAssignment(db: Knex, assignee: AssigneeRef, roleId: number, now: number): Promise<void> {
  if (assignee.kind === 'team') await db('team_roles').insert({ team_id: assignee.teamId, role_id: roleId, created_at: now });
  else await db('user_roles').insert({ user_id: assignee.userId, role_id: roleId, org_id: assignee.orgId, created_at: now });
}

/** Removes one assignment; returns whether there was one. */
export async function deleteAssignment(db: Knex, assignee: AssigneeRef, roleId: number): Promise<boolean> {
  if (assignee.kind === 'team') return (await db('team_roles').where({ team_id: assignee.teamId, role_id: roleId }).delete()) > 0;
  const query = db('user_roles').where({ user_id: assignee.userId, role_id: roleId });
  if (assignee.orgId) query.where('org_id', assignee.orgId);
  else query.whereNull('org_id');
  return (await query.delete()) > 0;
}

export interface RoleAssignees {
  /** Direct assignments: the user and the assignment's org (null: global). */
  users: Array<{ id: string; login: string; orgId: string | null }>;
  teams: Array<{ id: string; orgId: string }>;
}

export async function findAssigneesOfRole(db: Knex, roleId: number): Promise<RoleAssignees> {
  const [users, teams] = await Promise.all([
    db('user_roles as a').join('users as u', 'u.id', 'a.user_id').where('a.role_id', roleId).select('u.id', 'u.login', 'a.org_id'),
    db('team_roles as a').join('teams as t', 't.id', 'a.team_id').where('a.role_id', roleId).select('t.id', 't.org_id'),
  ]);
  return {
    users: (users as Array<{ id: string; login: string; org_id: string | null }>).map((u) => ({ id: u.id, login: u.login, orgId: u.org_id })),
    teams: (teams as Array<{ id: string; org_id: string }>).map((t) => ({ id: t.id, orgId: t.org_id })),
  };
}

/** A user's managed role in the org (`managed:users:<id>:permissions`), created and assigned when missing; its row id. */
export async function ensureManagedUserRole(db: Knex, orgId: string, userId: string, now: number): Promise<number> {
  const uid = managedUserRoleUid(userId);
  // Insert-or-keep: two grants to the same user at once must not collide on (org_id, uid).
  await db('roles')
    .insert({ uid, org_id: orgId, name: uid, display_name: '', description: '', group_name: '', hidden: true, version: 1, created_at: now, updated_at: now })
    .onConflict(['org_id', 'uid'])
    .ignore();
  const role: { id: number } = await db('roles').where({ org_id: orgId, uid }).first('id');
  await db('user_roles').insert({ user_id: userId, role_id: role.id, org_id: orgId, created_at: now }).onConflict(['user_id', 'role_id', 'org_id']).ignore();
  return role.id;
}

/** The row id of the org's role with that uid, if there is one. */
export async function findRoleIdInOrg(db: Knex, orgId: string, uid: string): Promise<number | undefined> {
  const role: { id: number } | undefined = await db('roles').where({ org_id: orgId, uid }).first('id');
  return role?.id;
}

/** Brings a seeded role's texts to its definition (its permissions: replaceRolePermissions), at a new version. */
export async function updateRoleDefinition(db: Knex, roleId: number, definition: RoleDefinition, version: number, now: number): Promise<void> {
  await db('roles').where('id', roleId).update({
    display_name: definition.displayName,
    description: definition.description,
    group_name: definition.groupName,
    version,
    updated_at: now,
  });
}

/** Adds permissions to a role, keeping those it already holds. */
export async function addRolePermissions(db: Knex, roleId: number, permissions: Permission[]): Promise<void> {
  if (permissions.length === 0) return;
  await db('role_permissions')
    .insert(permissions.map((p) => ({ role_id: roleId, action: p.action, scope: p.scope })))
    .onConflict(['role_id', 'action', 'scope'])
    .ignore();
}

/** Removes the role's permissions for these actions on one scope; how many it removed. */
export async function deleteRolePermissionsOnScope(db: Knex, roleId: number, scope: string, actions: readonly string[]): Promise<number> {
  return db('role_permissions')
    .where({ role_id: roleId, scope })
    .whereIn('action', [...actions])
    .delete();
}
