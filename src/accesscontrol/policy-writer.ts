/**
 * The policy writer: the one module that records a change of the policy data, and the writer of
 * the tables a policy document is built from. Grants (roles, their permissions and assignments,
 * the managed roles of resource grants and team admins, the legacy dashboard ACL), connectors' label rules, org and team
 * memberships, teams and orgs are written here, each write with the change it makes, in the same
 * transaction (src/db/transaction.ts appends it to the change log). The resources that live in
 * the folder tree (folders, dashboards, alert rules) are written by their stores, which say what
 * happened through the functions of the last section: no other module names a policy fragment
 * (test/policy-writes.test.ts reads src/ for it). A write of a policy table that records nothing
 * is still caught at its commit, and a wrong fragment by the test-mode document check
 * (AUTHZ_VERIFY_DOCUMENTS) after every commit.
 */
import type { Knex } from 'knex';
import type { PolicyFragment } from '../db/policy-changes.ts';
import { inStatementChunks } from '../db/chunks.ts';
import { lockRows, type RowLock } from '../db/row-lock.ts';
import type { Tx } from '../db/transaction.ts';
import type { OrgRole } from '../authz/types.ts';
import { managedBuiltinRoleUid, managedTeamRoleUid, managedUserRoleUid, type Permission, type RoleDefinition } from './builtin-roles.ts';
import { findAssigneesOfRole, findPermissionsByRoleIds, type AssigneeRef, type RoleAssignees, type RoleFields, type RoleRow } from './store.ts';

/** Where a role's change shows: its org, or every org (undefined) for a global role. */
const policyOrgOf = (orgId: string | null): string | undefined => orgId ?? undefined;

const roleFragment = (uid: string): PolicyFragment => ({ kind: 'role', uid });

function assigneeFragment(assignee: AssigneeRef): { orgId: string | undefined; fragment: PolicyFragment } {
  return assignee.kind === 'team'
    ? { orgId: assignee.orgId, fragment: { kind: 'team', teamId: assignee.teamId } }
    : { orgId: policyOrgOf(assignee.orgId), fragment: { kind: 'member', userId: assignee.userId } };
}

function reportAssignees(tx: Tx, assignees: RoleAssignees): void {
  for (const user of assignees.users) tx.policyChanged(policyOrgOf(user.orgId), { kind: 'member', userId: user.id });
  for (const team of assignees.teams) tx.policyChanged(team.orgId, { kind: 'team', teamId: team.id });
}

async function writePermissions(db: Knex, roleId: number, permissions: Permission[]): Promise<void> {
  await db('role_permissions').where('role_id', roleId).delete();
  const unique = new Map(permissions.map((p) => [`${p.action}\u0000${p.scope}`, p]));
  const rows = [...unique.values()].map((p) => ({ role_id: roleId, action: p.action, scope: p.scope }));
  await inStatementChunks(rows, (chunk) => db('role_permissions').insert(chunk));
}

/** Canonical text of a permission set, to tell whether a change changes it. */
export const permissionKey = (permissions: Permission[]) => [...new Set(permissions.map((p) => `${p.action} ${p.scope}`))].sort().join('\n');

// ---------------------------------------------------------------------------------------------
// Roles

/** Creates a role of the org (null: global) with its permissions; returns its row id. */
export async function createRole(tx: Tx, orgId: string | null, role: RoleDefinition, now: number, hidden = false): Promise<number> {
  const [id] = await tx.db('roles').insert({
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
  await writePermissions(tx.db, Number(id), role.permissions);
  tx.policyChanged(policyOrgOf(orgId), roleFragment(role.uid));
  return Number(id);
}

/**
 * Changes a role's texts and, when given, its permissions, only if it is still at `version`
 * (bumped in the same statement: of two writers that read one version exactly one wins).
 * Returns null when the version was stale, else whether the permissions changed.
 */
export async function changeRoleAtVersion(
  tx: Tx,
  role: RoleRow,
  version: number,
  fields: RoleFields,
  permissions: Permission[] | undefined,
  now: number,
): Promise<{ permissionsChanged: boolean } | null> {
  const updated = await tx
    .db('roles')
    .where({ id: role.id, version })
    .update({
      name: fields.name,
      display_name: fields.displayName,
      description: fields.description,
      group_name: fields.groupName,
      version: tx.db.raw('version + 1'),
      updated_at: now,
    });
  if (updated !== 1) return null;
  // Read again under the version just taken: another writer may have changed them since.
  const before = (await findPermissionsByRoleIds(tx.db, [role.id])).get(role.id) ?? [];
  const permissionsChanged = permissions !== undefined && permissionKey(permissions) !== permissionKey(before);
  if (permissionsChanged) {
    await writePermissions(tx.db, role.id, permissions);
    tx.policyChanged(policyOrgOf(role.org_id), roleFragment(role.uid));
  }
  return { permissionsChanged };
}

/** Puts a seeded role back to its definition (texts and permissions) at a new version. */
export async function redefineRole(tx: Tx, role: RoleRow, definition: RoleDefinition, now: number): Promise<void> {
  await tx
    .db('roles')
    .where('id', role.id)
    .update({
      display_name: definition.displayName,
      description: definition.description,
      group_name: definition.groupName,
      version: role.version + 1,
      updated_at: now,
    });
  await writePermissions(tx.db, role.id, definition.permissions);
  tx.policyChanged(policyOrgOf(role.org_id), roleFragment(role.uid));
}

/**
 * Re-reads a role decided on before its transaction, under lock: `update` for its delete (the
 * holders it reports are then all there are), `share` for an assignment of it (which a delete
 * waits for, or which waits for the delete and then finds the role gone). False when it is gone.
 */
export async function lockRole(tx: Tx, roleId: number, lock: RowLock): Promise<boolean> {
  return !!(await lockRows(tx.db, tx.db('roles').where('id', roleId), lock).first('id'));
}

/**
 * Re-reads the assignee of an assignment under a shared lock: the team, the org membership, or
 * the user of a global assignment. A delete of it waits for the assignment (and then removes it
 * with the rest), or the assignment for the delete, and then finds it gone (false).
 */
export async function lockAssignee(tx: Tx, assignee: AssigneeRef): Promise<boolean> {
  const query =
    assignee.kind === 'team'
      ? tx.db('teams').where({ id: assignee.teamId, org_id: assignee.orgId })
      : assignee.orgId
        ? tx.db('org_members').where({ org_id: assignee.orgId, user_id: assignee.userId })
        : tx.db('users').where('id', assignee.userId);
  return !!(await lockRows(tx.db, query, 'share').first());
}

/** Deletes the role with its permissions and every assignment of it; returns who held it. */
export async function deleteRole(tx: Tx, role: RoleRow): Promise<RoleAssignees> {
  const assignees = await findAssigneesOfRole(tx.db, role.id);
  await tx.db('user_roles').where('role_id', role.id).delete();
  await tx.db('team_roles').where('role_id', role.id).delete();
  await tx.db('role_permissions').where('role_id', role.id).delete();
  await tx.db('roles').where('id', role.id).delete();
  tx.policyChanged(policyOrgOf(role.org_id), roleFragment(role.uid));
  reportAssignees(tx, assignees);
  return assignees;
}

// ---------------------------------------------------------------------------------------------
// Assignments

export async function addAssignment(tx: Tx, assignee: AssigneeRef, roleId: number, now: number): Promise<void> {
  if (assignee.kind === 'team') await tx.db('team_roles').insert({ team_id: assignee.teamId, role_id: roleId, created_at: now });
  else await tx.db('user_roles').insert({ user_id: assignee.userId, role_id: roleId, org_id: assignee.orgId, created_at: now });
  const { orgId, fragment } = assigneeFragment(assignee);
  tx.policyChanged(orgId, fragment);
}

/** Removes one assignment; returns whether there was one. */
export async function removeAssignment(tx: Tx, assignee: AssigneeRef, roleId: number): Promise<boolean> {
  let removed: number;
  if (assignee.kind === 'team') removed = await tx.db('team_roles').where({ team_id: assignee.teamId, role_id: roleId }).delete();
  else {
    const query = tx.db('user_roles').where({ user_id: assignee.userId, role_id: roleId });
    if (assignee.orgId) query.where('org_id', assignee.orgId);
    else query.whereNull('org_id');
    removed = await query.delete();
  }
  if (removed > 0) {
    const { orgId, fragment } = assigneeFragment(assignee);
    tx.policyChanged(orgId, fragment);
  }
  return removed > 0;
}

// ---------------------------------------------------------------------------------------------
// Managed roles: resource grants and team admins

/** Who a managed role carries grants for: a user or service account, a team, or everyone of an org role. */
export type GrantHolder = { kind: 'user'; userId: string } | { kind: 'team'; teamId: string } | { kind: 'builtin'; role: 'Viewer' | 'Editor' | 'Admin' };

export function managedRoleUid(holder: GrantHolder): string {
  if (holder.kind === 'user') return managedUserRoleUid(holder.userId);
  if (holder.kind === 'team') return managedTeamRoleUid(holder.teamId);
  return managedBuiltinRoleUid(holder.role);
}

/** The row of a managed role: hidden, named by its uid. */
export function managedRoleRow(uid: string, orgId: string, now: number) {
  return { uid, org_id: orgId, name: uid, display_name: '', description: '', group_name: '', hidden: true, version: 1, created_at: now, updated_at: now };
}

/**
 * The holders' managed roles in the org, created and assigned where missing (an org role's is
 * carried by the org role itself: policy data lists it under builtin_roles); their row ids by
 * role uid. A few statements whatever the number of holders, rows in uid order so that two
 * transactions writing the same roles lock them in the same order.
 */
async function ensureManagedRoles(tx: Tx, orgId: string, holders: GrantHolder[], now: number): Promise<Map<string, number>> {
  const byUid = new Map(holders.map((holder) => [managedRoleUid(holder), holder]));
  const uids = [...byUid.keys()].sort();
  // Insert-or-keep: two grants to the same holder at once must not collide on (org_id, uid).
  await inStatementChunks(uids, (chunk) =>
    tx
      .db('roles')
      .insert(chunk.map((uid) => managedRoleRow(uid, orgId, now)))
      .onConflict(['org_id', 'uid'])
      .ignore(),
  );
  const ids = new Map<string, number>();
  await inStatementChunks(uids, async (chunk) => {
    const rows: Array<{ id: number; uid: string }> = await tx.db('roles').where('org_id', orgId).whereIn('uid', chunk).select('id', 'uid');
    for (const row of rows) ids.set(row.uid, row.id);
  });
  const users: Array<{ user_id: string; role_id: number; org_id: string; created_at: number }> = [];
  const teams: Array<{ team_id: string; role_id: number; created_at: number }> = [];
  for (const uid of uids) {
    const holder = byUid.get(uid)!;
    if (holder.kind === 'user') users.push({ user_id: holder.userId, role_id: ids.get(uid)!, org_id: orgId, created_at: now });
    else if (holder.kind === 'team') teams.push({ team_id: holder.teamId, role_id: ids.get(uid)!, created_at: now });
  }
  await inStatementChunks(users, (chunk) => tx.db('user_roles').insert(chunk).onConflict(['user_id', 'role_id', 'org_id']).ignore());
  await inStatementChunks(teams, (chunk) => tx.db('team_roles').insert(chunk).onConflict(['team_id', 'role_id']).ignore());
  for (const user of users) tx.policyChanged(orgId, { kind: 'member', userId: user.user_id });
  for (const team of teams) tx.policyChanged(orgId, { kind: 'team', teamId: team.team_id });
  return ids;
}

/** Adds permissions to the holder's managed role in the org, keeping those it holds. */
export async function grantManaged(tx: Tx, orgId: string, holder: GrantHolder, permissions: Permission[], now: number): Promise<void> {
  await grantManagedToEach(tx, orgId, [{ holder, permissions }], now);
}

/** Adds permissions to each holder's managed role in the org, keeping those it holds: a few statements for any number of holders. */
export async function grantManagedToEach(tx: Tx, orgId: string, grants: Array<{ holder: GrantHolder; permissions: Permission[] }>, now: number): Promise<void> {
  const given = grants.filter((grant) => grant.permissions.length > 0);
  if (given.length === 0) return;
  const roleIds = await ensureManagedRoles(
    tx,
    orgId,
    given.map((grant) => grant.holder),
    now,
  );
  const rows = given
    .flatMap(({ holder, permissions }) => permissions.map((p) => ({ role_id: roleIds.get(managedRoleUid(holder))!, action: p.action, scope: p.scope })))
    .sort((a, b) => a.role_id - b.role_id || (a.action < b.action ? -1 : a.action > b.action ? 1 : 0) || (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0));
  await inStatementChunks(rows, (chunk) => tx.db('role_permissions').insert(chunk).onConflict(['role_id', 'action', 'scope']).ignore());
  tx.policyChanged(orgId, ...[...roleIds.keys()].map(roleFragment));
}

/** Takes the holder's managed permissions of these actions on one scope away; how many went. */
export async function revokeManaged(tx: Tx, orgId: string, holder: GrantHolder, scope: string, actions: readonly string[]): Promise<number> {
  const uid = managedRoleUid(holder);
  const role: { id: number } | undefined = await tx.db('roles').where({ org_id: orgId, uid }).first('id');
  if (!role) return 0;
  const removed = await tx
    .db('role_permissions')
    .where({ role_id: role.id, scope })
    .whereIn('action', [...actions])
    .delete();
  if (removed > 0) tx.policyChanged(orgId, roleFragment(uid));
  return removed;
}

/** One managed grant on a resource: the holder and the actions it holds there. */
export interface ManagedGrant {
  holder: GrantHolder;
  actions: readonly string[];
}

/**
 * Makes `grants` the whole set of managed grants on `scope` among `family` (the actions one
 * permission endpoint manages there), in one step: what the holders had of the family on that
 * scope goes, the new set comes. Other actions on the scope (another endpoint's) stay.
 */
export async function replaceManagedGrants(
  tx: Tx,
  orgId: string,
  scope: string,
  family: readonly string[],
  grants: ManagedGrant[],
  now: number,
): Promise<void> {
  const holders: Array<{ id: number; uid: string }> = await tx
    .db('roles as r')
    .join('role_permissions as p', 'p.role_id', 'r.id')
    .where('r.org_id', orgId)
    .where('r.uid', 'like', 'managed:%')
    .where('p.scope', scope)
    .whereIn('p.action', [...family])
    .distinct('r.id', 'r.uid');
  if (holders.length > 0) {
    await tx
      .db('role_permissions')
      .whereIn(
        'role_id',
        holders.map((role) => role.id),
      )
      .where('scope', scope)
      .whereIn('action', [...family])
      .delete();
    tx.policyChanged(orgId, ...holders.map((role) => roleFragment(role.uid)));
  }
  await grantManagedToEach(
    tx,
    orgId,
    grants.map((grant) => ({ holder: grant.holder, permissions: grant.actions.map((action) => ({ action, scope })) })),
    now,
  );
}

/**
 * Deletes every permission of the org's roles on `scopes`, and the legacy ACL entries of the
 * folders and dashboards: a resource that goes leaves no grant behind (a later resource with
 * the same uid must not inherit it).
 */
export async function removeGrantsOnResources(
  tx: Tx,
  orgId: string,
  resources: { folderUids?: string[]; dashboardUids?: string[]; alertRuleUids?: string[]; connectorUids?: string[]; teamIds?: string[] },
): Promise<void> {
  const scopes = [
    ...(resources.folderUids ?? []).map((uid) => `folders:uid:${uid}`),
    ...(resources.dashboardUids ?? []).map((uid) => `dashboards:uid:${uid}`),
    ...(resources.alertRuleUids ?? []).map((uid) => `alert.rules:uid:${uid}`),
    ...(resources.connectorUids ?? []).map((uid) => `connectors:uid:${uid}`),
    ...(resources.teamIds ?? []).map((id) => `teams:id:${id}`),
  ];
  if (scopes.length === 0) return;
  const roles: Array<{ id: number; uid: string }> = await tx
    .db('roles as r')
    .join('role_permissions as p', 'p.role_id', 'r.id')
    .where('r.org_id', orgId)
    .whereIn('p.scope', scopes)
    .distinct('r.id', 'r.uid');
  if (roles.length > 0) {
    await tx
      .db('role_permissions')
      .whereIn(
        'role_id',
        roles.map((role) => role.id),
      )
      .whereIn('scope', scopes)
      .delete();
    tx.policyChanged(orgId, ...roles.map((role) => roleFragment(role.uid)));
  }
  await removeLabelRules(tx, orgId, resources.connectorUids ?? []);
  const legacy = tx.db('legacy_acl').where('org_id', orgId);
  legacy.where((q) => q.whereIn('folder_uid', resources.folderUids ?? []).orWhereIn('dashboard_uid', resources.dashboardUids ?? []));
  if ((await legacy.delete()) > 0) tx.policyChanged(orgId, { kind: 'legacy_acl' });
}

// ---------------------------------------------------------------------------------------------
// Holders that go away

/**
 * Everything that gave a user rights in one org beyond the membership (Grafana's
 * RemoveOrgUser): role assignments there, the managed role of its resource grants and its legacy
 * ACL entries, so that being added again starts from the org role alone.
 */
export async function removeMemberGrants(tx: Tx, orgId: string, userId: string): Promise<void> {
  const uid = managedUserRoleUid(userId);
  const assigned = await tx.db('user_roles').where({ org_id: orgId, user_id: userId }).delete();
  // Foreign keys remove the managed role's permissions and assignments with it.
  const managed = await tx.db('roles').where({ org_id: orgId, uid }).delete();
  const legacy = await tx.db('legacy_acl').where({ org_id: orgId, user_id: userId }).delete();
  if (assigned > 0 || managed > 0) tx.policyChanged(orgId, { kind: 'member', userId });
  if (managed > 0) tx.policyChanged(orgId, roleFragment(uid));
  if (legacy > 0) tx.policyChanged(orgId, { kind: 'legacy_acl' });
}

/** A user or service account about to be deleted: its grants in every org, and its global assignments. */
export async function removeUserGrants(tx: Tx, userId: string): Promise<void> {
  const [managed, legacy, assigned] = await Promise.all([
    tx.db('roles').where('uid', managedUserRoleUid(userId)).whereNotNull('org_id').pluck('org_id'),
    tx.db('legacy_acl').where('user_id', userId).pluck('org_id'),
    tx.db('user_roles').where('user_id', userId).whereNotNull('org_id').pluck('org_id'),
  ]);
  const orgIds: string[] = [...managed, ...legacy, ...assigned];
  for (const orgId of new Set(orgIds)) await removeMemberGrants(tx, orgId, userId);
  const global = await tx.db('user_roles').where('user_id', userId).whereNull('org_id').delete();
  if (global > 0) tx.policyChanged(undefined, { kind: 'member', userId });
}

/** A team about to be deleted: its managed role, its assignments, its legacy ACL entries and every permission on it (its admins'). */
export async function removeTeamGrants(tx: Tx, orgId: string, teamId: string): Promise<void> {
  await removeGrantsOnResources(tx, orgId, { teamIds: [teamId] });
  const uid = managedTeamRoleUid(teamId);
  const managed = await tx.db('roles').where({ org_id: orgId, uid }).delete();
  const assigned = await tx.db('team_roles').where('team_id', teamId).delete();
  const legacy = await tx.db('legacy_acl').where({ org_id: orgId, team_id: teamId }).delete();
  if (managed > 0) tx.policyChanged(orgId, roleFragment(uid));
  if (managed > 0 || assigned > 0) tx.policyChanged(orgId, { kind: 'team', teamId });
  if (legacy > 0) tx.policyChanged(orgId, { kind: 'legacy_acl' });
}

// ---------------------------------------------------------------------------------------------
// The legacy dashboard ACL (read by the policy as a fallback unless LEGACY_ACL_ENABLED=false)

/** One legacy entry: one resource (a dashboard or a folder), one principal, a level 1, 2 or 4. */
export interface LegacyAclEntry {
  dashboardUid: string | null;
  folderUid: string | null;
  userId: string | null;
  teamId: string | null;
  role: 'Viewer' | 'Editor' | 'Admin' | null;
  permission: 1 | 2 | 4;
}

/** Makes `entries` the org's whole legacy ACL: an import is a whole export, so running it again changes nothing. */
export async function replaceLegacyAcl(tx: Tx, orgId: string, entries: LegacyAclEntry[]): Promise<void> {
  await tx.db('legacy_acl').where('org_id', orgId).delete();
  const rows = entries.map((entry) => ({
    org_id: orgId,
    dashboard_uid: entry.dashboardUid,
    folder_uid: entry.folderUid,
    user_id: entry.userId,
    team_id: entry.teamId,
    role: entry.role,
    permission: entry.permission,
  }));
  await inStatementChunks(rows, (chunk) => tx.db('legacy_acl').insert(chunk));
  tx.policyChanged(orgId, { kind: 'legacy_acl' });
}

/** Takes the org's legacy ACL out, to be migrated into managed grants; returns what it held. */
export async function takeLegacyAcl(tx: Tx, orgId: string): Promise<LegacyAclEntry[]> {
  const rows: Array<{
    dashboard_uid: string | null;
    folder_uid: string | null;
    user_id: string | null;
    team_id: string | null;
    role: string | null;
    permission: number;
  }> = await tx.db('legacy_acl').where('org_id', orgId).orderBy('id').select('dashboard_uid', 'folder_uid', 'user_id', 'team_id', 'role', 'permission');
  if (rows.length === 0) return [];
  await tx.db('legacy_acl').where('org_id', orgId).delete();
  tx.policyChanged(orgId, { kind: 'legacy_acl' });
  return rows.map((row) => ({
    dashboardUid: row.dashboard_uid,
    folderUid: row.folder_uid,
    userId: row.user_id,
    teamId: row.team_id,
    role: row.role as LegacyAclEntry['role'],
    permission: row.permission as LegacyAclEntry['permission'],
  }));
}

// ---------------------------------------------------------------------------------------------
// Connectors' label rules (which series of a metrics connector each principal may read)

/** Whom a label rule applies to: a user, a service account, a team, or everyone of an org role. */
export type LabelRulePrincipal =
  | { kind: 'user'; id: string }
  | { kind: 'service_account'; id: string }
  | { kind: 'team'; id: string }
  | { kind: 'role'; id: 'Viewer' | 'Editor' | 'Admin' | 'None' };

export interface LabelRule {
  principal: LabelRulePrincipal;
  /** A PromQL label-matcher set, already checked: `{namespace="checkout"}`. */
  selector: string;
}

/** Makes `rules` the connector's whole set of label rules, in their order (none: the connector has no rule left). */
export async function replaceLabelRules(tx: Tx, orgId: string, connectorUid: string, rules: LabelRule[], now: number): Promise<void> {
  const removed = await tx.db('connector_label_rules').where({ org_id: orgId, connector_uid: connectorUid }).delete();
  const rows = rules.map((rule, position) => ({
    org_id: orgId,
    connector_uid: connectorUid,
    position,
    principal_kind: rule.principal.kind,
    principal_id: rule.principal.id,
    selector: rule.selector,
    created_at: now,
  }));
  await inStatementChunks(rows, (chunk) => tx.db('connector_label_rules').insert(chunk));
  if (removed > 0 || rows.length > 0) tx.policyChanged(orgId, { kind: 'label_rules', connectorUid });
}

/** The label rules of connectors that go. */
async function removeLabelRules(tx: Tx, orgId: string, connectorUids: string[]): Promise<void> {
  if (connectorUids.length === 0) return;
  const ruled: string[] = await tx.db('connector_label_rules').where('org_id', orgId).whereIn('connector_uid', connectorUids).distinct().pluck('connector_uid');
  if (ruled.length === 0) return;
  await tx.db('connector_label_rules').where('org_id', orgId).whereIn('connector_uid', ruled).delete();
  tx.policyChanged(orgId, ...ruled.map((connectorUid): PolicyFragment => ({ kind: 'label_rules', connectorUid })));
}

// ---------------------------------------------------------------------------------------------
// Memberships, teams and orgs

const memberFragment = (userId: string): PolicyFragment => ({ kind: 'member', userId });

/** Makes the user (or service account) a member of the org with `role`. */
export async function addOrgMember(tx: Tx, orgId: string, userId: string, role: OrgRole, now: number): Promise<void> {
  await tx.db('org_members').insert({ org_id: orgId, user_id: userId, role, created_at: now });
  tx.policyChanged(orgId, memberFragment(userId));
}

/** Gives the org member another org role. */
export async function setMemberRole(tx: Tx, orgId: string, userId: string, role: OrgRole): Promise<void> {
  await tx.db('org_members').where({ org_id: orgId, user_id: userId }).update({ role });
  tx.policyChanged(orgId, memberFragment(userId));
}

/**
 * Takes a user out of an org with everything that gave them rights there: its team memberships,
 * role assignments, managed role of resource grants and legacy ACL entries (removeMemberGrants),
 * then the membership itself.
 */
export async function removeOrgMember(tx: Tx, orgId: string, userId: string): Promise<void> {
  await tx.db('team_members').where('user_id', userId).whereIn('team_id', tx.db('teams').where('org_id', orgId).select('id')).delete();
  await removeMemberGrants(tx, orgId, userId);
  await tx.db('org_members').where({ org_id: orgId, user_id: userId }).delete();
  tx.policyChanged(orgId, memberFragment(userId));
}

/**
 * Deletes a user (with `serviceAccount`, only a service account) and its grants; foreign keys take
 * its memberships, team memberships and assignments. Every org it belonged to re-reads it.
 * Returns whether the user was there.
 */
export async function deleteUser(tx: Tx, userId: string, options: { serviceAccount?: boolean } = {}): Promise<boolean> {
  const orgIds: string[] = await tx.db('org_members').where('user_id', userId).pluck('org_id');
  await removeUserGrants(tx, userId);
  const query = tx.db('users').where('id', userId);
  if (options.serviceAccount) query.where('is_service_account', true);
  const deleted = (await query.delete()) === 1;
  for (const orgId of orgIds) tx.policyChanged(orgId, memberFragment(userId));
  return deleted;
}

/** Creates a team of the org under `id`. */
export async function insertTeam(tx: Tx, orgId: string, id: string, team: { name: string; email: string }, now: number): Promise<void> {
  await tx.db('teams').insert({ id, org_id: orgId, name: team.name, email: team.email, created_at: now, updated_at: now });
  tx.policyChanged(orgId, { kind: 'team', teamId: id });
}

/** Team memberships are policy data: the member's teams decide the roles it holds. */
export async function addTeamMember(tx: Tx, team: { id: string; org_id: string }, userId: string, permission: number, now: number): Promise<void> {
  await tx.db('team_members').insert({ team_id: team.id, user_id: userId, permission, created_at: now });
  tx.policyChanged(team.org_id, memberFragment(userId));
}

export async function removeTeamMember(tx: Tx, team: { id: string; org_id: string }, userId: string): Promise<void> {
  await tx.db('team_members').where({ team_id: team.id, user_id: userId }).delete();
  tx.policyChanged(team.org_id, memberFragment(userId));
}

/** Deletes the team with its grants (removeTeamGrants) and its members; returns the members it had. */
export async function deleteTeam(tx: Tx, team: { id: string; org_id: string }): Promise<{ memberIds: string[] }> {
  const memberIds: string[] = await tx.db('team_members').where('team_id', team.id).pluck('user_id');
  await removeTeamGrants(tx, team.org_id, team.id);
  await tx.db('team_members').where('team_id', team.id).delete();
  await tx.db('teams').where('id', team.id).delete();
  tx.policyChanged(team.org_id, { kind: 'team', teamId: team.id }, ...memberIds.map(memberFragment));
  return { memberIds };
}

/** Deletes the org row; foreign keys take everything of its policy data, and its document goes as a whole. */
export async function deleteOrg(tx: Tx, orgId: string): Promise<void> {
  await tx.db('orgs').where('id', orgId).delete();
  tx.policyChanged(orgId);
}

// ---------------------------------------------------------------------------------------------
// An org filled at once (a benchmark's org of thousands of members and teams): statements of
// ROWS_PER_STATEMENT rows, and one change of the whole org, whose document is rebuilt rather
// than patched fragment by fragment

/** Makes each user a member of the org with its org role. */
export async function addOrgMembersInBulk(tx: Tx, orgId: string, members: Array<{ userId: string; role: OrgRole }>, now: number): Promise<void> {
  await inStatementChunks(members, (chunk) =>
    tx.db('org_members').insert(chunk.map((member) => ({ org_id: orgId, user_id: member.userId, role: member.role, created_at: now }))),
  );
  tx.policyChanged(orgId);
}

/** Creates teams of the org, each with its plain members. */
export async function insertTeamsInBulk(tx: Tx, orgId: string, teams: Array<{ id: string; name: string; memberIds: string[] }>, now: number): Promise<void> {
  await inStatementChunks(teams, (chunk) =>
    tx.db('teams').insert(chunk.map((team) => ({ id: team.id, org_id: orgId, name: team.name, email: '', created_at: now, updated_at: now }))),
  );
  const members = teams.flatMap((team) =>
    [...new Set(team.memberIds)].map((userId) => ({ team_id: team.id, user_id: userId, permission: 0, created_at: now })),
  );
  await inStatementChunks(members, (chunk) => tx.db('team_members').insert(chunk));
  tx.policyChanged(orgId);
}

/** Folders, dashboards or alert rules written at once by their stores: the org's document is rebuilt. */
export function resourcesFiledInBulk(tx: Tx, orgId: string): void {
  tx.policyChanged(orgId);
}

// ---------------------------------------------------------------------------------------------
// The folder tree and what lives in it, written by their stores (src/folders): what happened

/** Folders made or moved: `uids` are those whose ancestor chain changed (a moved folder's whole subtree). */
export function foldersPlaced(tx: Tx, orgId: string, uids: string[]): void {
  tx.policyChanged(orgId, { kind: 'folders', uids });
}

/** A subtree deleted: its folders, dashboards and alert rules (their grants went with removeGrantsOnResources). */
export function folderTreeDeleted(tx: Tx, orgId: string, deleted: { folderUids: string[]; dashboardUids: string[]; alertRuleUids: string[] }): void {
  tx.policyChanged(
    orgId,
    { kind: 'folders', uids: deleted.folderUids },
    ...deleted.dashboardUids.map((uid): PolicyFragment => ({ kind: 'dashboard', uid })),
    ...deleted.alertRuleUids.map((uid): PolicyFragment => ({ kind: 'alert_rule', uid })),
  );
}

/** A dashboard or alert rule created, moved to another folder, or deleted: where its grants inherit from changed. */
export function resourceFiled(tx: Tx, table: 'dashboards' | 'alert_rules', orgId: string, uid: string): void {
  tx.policyChanged(orgId, table === 'dashboards' ? { kind: 'dashboard', uid } : { kind: 'alert_rule', uid });
}
