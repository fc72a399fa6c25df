/**
 * Code-host team sync (OAUTH_CODEHOST_SYNC_TEAMS): the teams of the provider's default org named
 * `<org>/<team slug>` follow the user's code-host teams at each login — joined (as a plain
 * member) when the user is in that code-host team, left when no longer. Other teams are the
 * admins' and are not touched; a user outside the default org is not synced.
 */
import { recordAudit, type Actor } from '../../audit/writer.ts';
import type { Tx } from '../../db/transaction.ts';
import { isOrgMember } from '../../orgs/store.ts';
import { revokeTeamAdmin } from '../../teams/team-admins.ts';
import { teamAuditTarget } from '../../teams/team-target.ts';
import { deleteTeamMember, findProviderNamedTeamsWithMembership, insertTeamMember, TEAM_MEMBER } from '../../teams/store.ts';
import type { UserRow } from '../users.store.ts';

export async function syncProviderTeams(tx: Tx, actor: Actor, orgId: string, user: UserRow, providerTeams: string[], via: string, now: number): Promise<void> {
  if (!(await isOrgMember(tx.db, orgId, user.id))) return;
  const wanted = new Set(providerTeams.map((team) => team.toLowerCase()));
  for (const team of await findProviderNamedTeamsWithMembership(tx.db, orgId, user.id)) {
    const shouldBelong = wanted.has(team.name.toLowerCase());
    const belongs = team.permission !== null;
    if (shouldBelong === belongs) continue;
    if (shouldBelong) {
      await insertTeamMember(tx, team, user.id, TEAM_MEMBER, now);
    } else {
      await deleteTeamMember(tx, team, user.id);
      await revokeTeamAdmin(tx, orgId, team.id, user.id);
    }
    await recordAudit(
      tx.db,
      actor,
      {
        action: shouldBelong ? 'team.member_added' : 'team.member_removed',
        orgId,
        target: teamAuditTarget(team),
        metadata: { userId: user.id, login: user.login, via },
      },
      now,
    );
  }
}
