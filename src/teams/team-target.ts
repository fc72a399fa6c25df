/** What every `/api/teams/:id…` route shares: the path schema, the policy target, the lookup, the audit target. */
import type { Knex } from 'knex';
import type { ResourceRef } from '../authz/types.ts';
import { NotFoundError } from '../errors.ts';
import { findTeamInOrg, type TeamRow } from './store.ts';

export const teamIdParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['id'],
} as const;

export const teamResource = (teamId: string): ResourceRef => ({ kind: 'teams', id: teamId });

export const teamAuditTarget = (team: TeamRow) => ({ type: 'team', id: team.id, name: team.name });

/**
 * The team in the active org. A team of another org is as unknown as a missing one: the
 * caller was authorized in the active org only. Call it after authorize(); a write locks it
 * (`lock`) in its transaction, so it acts on the team as it is, or not at all.
 */
export async function findTeamOrFail(db: Knex, orgId: string, teamId: string, lock = false): Promise<TeamRow> {
  const team = await findTeamInOrg(db, orgId, teamId, lock);
  if (!team) throw new NotFoundError(`team ${teamId} not found`);
  return team;
}
