/**
 * Team admins, the Grafana way: as data the policy already understands. A member with
 * permission 4 holds the team-admin actions on `teams:id:<teamId>` through its managed role
 * `managed:users:<userId>:permissions` in the team's org (created on demand, hidden, assigned
 * to the user in that org). So a team admin manages its own team and no other, and losing the
 * Admin permission, the membership or the team takes the rights away.
 */
import { managedUserRoleUid, type Permission } from '../accesscontrol/builtin-roles.ts';
import type { Tx } from '../db/transaction.ts';

/** What a team admin may do on its team: read and rename it, and manage its members. */
export const TEAM_ADMIN_ACTIONS = ['teams:read', 'teams:write', 'team.permissions:read', 'team.permissions:write'] as const;

const teamScope = (teamId: string) => `teams:id:${teamId}`;

export function teamAdminPermissions(teamId: string): Permission[] {
  return TEAM_ADMIN_ACTIONS.map((action) => ({ action, scope: teamScope(teamId) }));
}

/** The user's managed role in the org, created and assigned when missing; returns its row id. */
async function ensureManagedUserRole(tx: Tx, orgId: string, userId: string, now: number): Promise<number> {
  const uid = managedUserRoleUid(userId);
  // Insert-or-keep: two grants to the same user at once must not collide on (org_id, uid).
  await tx.db('roles')
    .insert({ uid, org_id: orgId, name: uid, display_name: '', description: '', group_name: '', hidden: true, version: 1, created_at: now, updated_at: now })
    .onConflict(['org_id', 'uid'])
    .ignore();
  const role: { id: number } = await tx.db('roles').where({ org_id: orgId, uid }).first('id');
  await tx.db('user_roles').insert({ user_id: userId, role_id: role.id, org_id: orgId, created_at: now }).onConflict(['user_id', 'role_id', 'org_id']).ignore();
  return role.id;
}

/** Makes the member an admin of the team; the policy sees it after commit. */
export async function grantTeamAdmin(tx: Tx, orgId: string, teamId: string, userId: string, now: number): Promise<void> {
  const roleId = await ensureManagedUserRole(tx, orgId, userId, now);
  const rows = teamAdminPermissions(teamId).map((p) => ({ role_id: roleId, action: p.action, scope: p.scope }));
  await tx.db('role_permissions').insert(rows).onConflict(['role_id', 'action', 'scope']).ignore();
  tx.policyChanged(orgId, { kind: 'role', uid: managedUserRoleUid(userId) }, { kind: 'member', userId });
}

/** Takes the team-admin rights on the team away from the user (nothing to do when it has none). */
export async function revokeTeamAdmin(tx: Tx, orgId: string, teamId: string, userId: string): Promise<void> {
  const uid = managedUserRoleUid(userId);
  const role: { id: number } | undefined = await tx.db('roles').where({ org_id: orgId, uid }).first('id');
  if (!role) return;
  const removed = await tx.db('role_permissions')
    .where({ role_id: role.id, scope: teamScope(teamId) })
    .whereIn('action', [...TEAM_ADMIN_ACTIONS])
    .delete();
  if (removed > 0) tx.policyChanged(orgId, { kind: 'role', uid }, { kind: 'member', userId });
}
