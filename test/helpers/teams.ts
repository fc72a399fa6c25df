/** Team factories: teams, members and team role assignments straight through the stores. */
import { randomToken } from '../../src/crypto/tokens.ts';
import { DEFAULT_ORG_ID } from '../../src/orgs/store.ts';
import { insertTeam, insertTeamMember, TEAM_ADMIN, type TeamPermission } from '../../src/teams/store.ts';
import { grantTeamAdmin } from '../../src/teams/team-admins.ts';
import type { TestApp } from './app.ts';

export interface TestTeam {
  id: string;
  name: string;
  orgId: string;
}

let sequence = 0;

export async function createTeam(app: TestApp, overrides: { orgId?: string; name?: string; email?: string } = {}): Promise<TestTeam> {
  sequence += 1;
  const orgId = overrides.orgId ?? DEFAULT_ORG_ID;
  const name = overrides.name ?? `team ${sequence} ${randomToken(3)}`;
  const id = await app.services.transact(async (tx) => {
    const teamId = await insertTeam(tx.db, orgId, { name, email: overrides.email ?? '' }, app.clock.now());
    tx.policyChanged(orgId, { kind: 'team', teamId });
    return teamId;
  });
  return { id, name, orgId };
}

/** Adds the user to the team; an Admin (4) also gets the team-admin rights, as the API does it. */
export async function addTeamMember(app: TestApp, team: TestTeam, userId: string, permission: TeamPermission = 0): Promise<void> {
  const now = app.clock.now();
  await app.services.transact(async (tx) => {
    await insertTeamMember(tx.db, team.id, userId, permission, now);
    tx.policyChanged(team.orgId, { kind: 'member', userId });
    if (permission === TEAM_ADMIN) await grantTeamAdmin(tx, team.orgId, team.id, userId, now);
  });
}

/** Assigns a role of the team's org (a fixed one, say) to the team. */
export async function assignRoleToTeam(app: TestApp, team: TestTeam, roleUid: string): Promise<void> {
  await app.services.transact(async (tx) => {
    const role: { id: number } = await tx.db('roles').where({ org_id: team.orgId, uid: roleUid }).first('id');
    await tx.db('team_roles').insert({ team_id: team.id, role_id: role.id, created_at: app.clock.now() });
    tx.policyChanged(team.orgId, { kind: 'team', teamId: team.id });
  });
}

/** Many teams at once (search at scale), named `<prefix> 00001`…; returns their ids in name order. */
export async function createManyTeams(app: TestApp, orgId: string, count: number, prefix: string): Promise<string[]> {
  const now = app.clock.now();
  const rows = Array.from({ length: count }, (_, i) => ({ id: `team_bulk${randomToken(6).replace(/[^A-Za-z0-9]/g, 'x')}${i}`, org_id: orgId, name: `${prefix} ${String(i).padStart(5, '0')}`, email: '', created_at: now, updated_at: now }));
  await app.services.transact(async (tx) => {
    for (let i = 0; i < rows.length; i += 500) await tx.db('teams').insert(rows.slice(i, i + 500));
    tx.policyChanged(orgId);
  });
  return rows.map((row) => row.id);
}
