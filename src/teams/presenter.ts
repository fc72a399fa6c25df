/** Teams and team members as the API shows them: whitelists, in Grafana's field names. */
import { avatarUrl } from '../identity/user.presenter.ts';

import { TEAM_ADMIN, TEAM_MEMBER, type TeamMemberRow, type TeamRow } from './store.ts';
import { listPageSchema } from '../http/responses.ts';

const teamProperties = {
  id: { type: 'string' },
  orgId: { type: 'string' },
  name: { type: 'string' },
  email: { type: 'string' },
  avatarUrl: { type: 'string' },
  memberCount: { type: 'integer', minimum: 0 },
} as const;

export const TEAM_SCHEMA = { type: 'object', properties: teamProperties, required: ['id', 'orgId', 'name', 'email', 'avatarUrl', 'memberCount'] } as const;

/** A created team also names its id as `teamId` (Grafana's create answer). */
export const TEAM_CREATED_SCHEMA = {
  type: 'object',
  properties: { teamId: { type: 'string' }, ...teamProperties },
  required: ['teamId', ...TEAM_SCHEMA.required],
} as const;

export const TEAMS_PAGE_SCHEMA = listPageSchema('teams', TEAM_SCHEMA);

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

export const TEAM_MEMBER_SCHEMA = {
  type: 'object',
  properties: {
    orgId: { type: 'string' },
    teamId: { type: 'string' },
    userId: { type: 'string' },
    login: { type: 'string' },
    email: { type: 'string' },
    name: { type: 'string' },
    permission: { enum: [TEAM_MEMBER, TEAM_ADMIN] },
    avatarUrl: { type: 'string' },
  },
  required: ['orgId', 'teamId', 'userId', 'login', 'email', 'name', 'permission', 'avatarUrl'],
} as const;

export const TEAM_MEMBERS_PAGE_SCHEMA = listPageSchema('teamMembers', TEAM_MEMBER_SCHEMA);

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
