/**
 * Team admins, the Grafana way: as data the policy already understands. A member with
 * permission 4 holds the team-admin actions on `teams:id:<teamId>` through its managed role
 * `managed:users:<userId>:permissions` in the team's org (created on demand, hidden, assigned
 * to the user in that org). So a team admin manages its own team and no other, and losing the
 * Admin permission, the membership or the team takes the rights away.
 */
import { managedUserRoleUid, type Permission } from '../accesscontrol/builtin-roles.ts';
import { addRolePermissions, deleteRolePermissionsOnScope, ensureManagedUserRole, findRoleIdInOrg } from '../accesscontrol/store.ts';
import type { Tx } from '../db/transaction.ts';

/** What a team admin may do on its team: read and rename it, and manage its members. */
export const TEAM_ADMIN_ACTIONS = ['teams:read', 'teams:write', 'team.permissions:read', 'team.permissions:write'] as const;

const teamScope = (teamId: string) => `teams:id:${teamId}`;

export function teamAdminPermissions(teamId: string): Permission[] {
  return TEAM_ADMIN_ACTIONS.map((action) => ({ action, scope: teamScope(teamId) }));
}

/** Makes the member an admin of the team; the policy sees it after commit. */
export async function grantTeamAdmin(tx: Tx, orgId: string, teamId: string, userId: string, now: number): Promise<void> {
  const roleId = await ensureManagedUserRole(tx.db, orgId, userId, now);
  await addRolePermissions(tx.db, roleId, teamAdminPermissions(teamId));
  tx.policyChanged(orgId, { kind: 'role', uid: managedUserRoleUid(userId) }, { kind: 'member', userId });
}

/** Takes the team-admin rights on the team away from the user (nothing to do when it has none). */
export async function revokeTeamAdmin(tx: Tx, orgId: string, teamId: string, userId: string): Promise<void> {
  const uid = managedUserRoleUid(userId);
  const roleId = await findRoleIdInOrg(tx.db, orgId, uid);
  if (roleId === undefined) return;
  const removed = await deleteRolePermissionsOnScope(tx.db, roleId, teamScope(teamId), TEAM_ADMIN_ACTIONS);
  if (removed > 0) tx.policyChanged(orgId, { kind: 'role', uid }, { kind: 'member', userId });
}
