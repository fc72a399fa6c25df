/** Teams and team members as the API shows them: whitelists, in Grafana's field names. */
import { avatarUrl } from '../identity/user.presenter.ts';
import type { TeamMemberRow, TeamRow } from './store.ts';

export function presentTeam(team: TeamRow, memberCount: number) {
  return {
    id: team.id,
    orgId: team.org_id,
    name: team.name,
    email: team.email,
    // Grafana's team avatar: the gravatar of the team email, else an identicon of its name.
    avatarUrl: avatarUrl(team.email || null, team.name),
    memberCount,
  };
}

export function presentTeamMember(member: TeamMemberRow, orgId: string) {
  return {
    orgId,
    teamId: member.team_id,
    userId: member.user_id,
    login: member.login,
    email: member.email ?? '',
    name: member.name,
    permission: Number(member.permission),
    avatarUrl: avatarUrl(member.email, member.login),
  };
}
