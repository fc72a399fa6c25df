/** SQL of roles and their permissions. */
import type { Knex } from 'knex';
import type { Permission } from './builtin-roles.ts';

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
 * Whose roles an assignment changes: a user in one org, a user everywhere (`orgId` null: a
 * global assignment), or a team (always of one org).
 */
export type AssigneeRef = { kind: 'user'; userId: string; orgId: string | null } | { kind: 'team'; teamId: string; orgId: string };

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

/** Who holds a role in an org: its members' assignments there and their global ones, and the org's teams'. */
export interface RoleHoldersInOrg {
  users: Array<{ id: string; login: string; name: string; serviceAccount: boolean; global: boolean }>;
  teams: Array<{ id: string; name: string }>;
}

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The holders of role `roleId` in `orgId`, each kind sorted by id (in code, so both databases
 * order alike); a user with an org and a global assignment of the role comes twice, org first.
 * A global assignment counts only for members of the org.
 */
export async function findRoleHoldersInOrg(db: Knex, orgId: string, roleId: number): Promise<RoleHoldersInOrg> {
  const [users, teams] = await Promise.all([
    db('user_roles as a')
      .join('users as u', 'u.id', 'a.user_id')
      .join('org_members as m', 'm.user_id', 'a.user_id')
      .where('a.role_id', roleId)
      .where('m.org_id', orgId)
      .where((q) => q.where('a.org_id', orgId).orWhereNull('a.org_id'))
      .select('u.id', 'u.login', 'u.name', 'u.is_service_account', 'a.org_id'),
    db('team_roles as a').join('teams as t', 't.id', 'a.team_id').where('a.role_id', roleId).where('t.org_id', orgId).select('t.id', 't.name'),
  ]);
  const userRows = users as Array<{ id: string; login: string; name: string; is_service_account: boolean | number; org_id: string | null }>;
  return {
    users: userRows
      .map((u) => ({ id: u.id, login: u.login, name: u.name, serviceAccount: !!u.is_service_account, global: u.org_id === null }))
      .sort((a, b) => byId(a, b) || Number(a.global) - Number(b.global)),
    teams: (teams as Array<{ id: string; name: string }>).map((t) => ({ id: t.id, name: t.name })).sort(byId),
  };
}

/** The row id of the org's role with that uid, if there is one. */
export async function findRoleIdInOrg(db: Knex, orgId: string, uid: string): Promise<number | undefined> {
  const role: { id: number } | undefined = await db('roles').where({ org_id: orgId, uid }).first('id');
  return role?.id;
}

/** The permissions of the org's managed roles on `scopes` among `actions`: what resource grants hold there. */
export async function findManagedPermissionsOnScopes(
  db: Knex,
  orgId: string,
  scopes: string[],
  actions: readonly string[],
): Promise<Array<{ uid: string; action: string; scope: string }>> {
  if (scopes.length === 0) return [];
  return db('roles as r')
    .join('role_permissions as p', 'p.role_id', 'r.id')
    .where('r.org_id', orgId)
    .where('r.uid', 'like', 'managed:%')
    .whereIn('p.scope', scopes)
    .whereIn('p.action', [...actions])
    .select('r.uid', 'p.action', 'p.scope');
}
