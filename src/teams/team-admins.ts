/**
 * Team admins, the Grafana way: as data the policy already understands. A member with
 * permission 4 holds the team-admin actions on `teams:id:<teamId>` through its managed role
 * `managed:users:<userId>:permissions` in the team's org (accesscontrol/policy-writer.ts creates it on
 * demand, hidden, assigned to the user in that org). So a team admin manages its own team and no
 * other, and losing the Admin permission, the membership or the team takes the rights away.
 */
import type { Permission } from '../accesscontrol/builtin-roles.ts';
import { grantManaged, revokeManaged } from '../accesscontrol/policy-writer.ts';
import type { Tx } from '../db/transaction.ts';

/** What a team admin may do on its team: read and rename it, and manage its members. */
export const TEAM_ADMIN_ACTIONS = ['teams:read', 'teams:write', 'team.permissions:read', 'team.permissions:write'] as const;

const teamScope = (teamId: string) => `teams:id:${teamId}`;

export function teamAdminPermissions(teamId: string): Permission[] {
  return TEAM_ADMIN_ACTIONS.map((action) => ({ action, scope: teamScope(teamId) }));
}

/** Makes the member an admin of the team. */
export async function grantTeamAdmin(tx: Tx, orgId: string, teamId: string, userId: string, now: number): Promise<void> {
  await grantManaged(tx, orgId, { kind: 'user', userId }, teamAdminPermissions(teamId), now);
}

/** Takes the team-admin rights on the team away from the user (nothing to do when it has none). */
export async function revokeTeamAdmin(tx: Tx, orgId: string, teamId: string, userId: string): Promise<void> {
  await revokeManaged(tx, orgId, { kind: 'user', userId }, teamScope(teamId), TEAM_ADMIN_ACTIONS);
}
