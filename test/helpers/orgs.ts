/** What the org tests share: a caller per principal, and org-scoped state built through the stores. */
import { insertRole } from '../../src/accesscontrol/store.ts';
import type { OrgRole } from '../../src/authz/types.ts';
import { writePreferences } from '../../src/preferences/store.ts';
import type { TestApp } from './app.ts';
import { createServiceAccount as createStoredServiceAccount, issueToken } from './serviceaccounts.ts';
import { addTeamMember, createTeam as createStoredTeam } from './teams.ts';

export const ORG_FIELDS = ['id', 'name', 'address', 'billingEmail'];
export const MEMBER_FIELDS = ['userId', 'login', 'email', 'name', 'role', 'avatarUrl', 'lastSeenAt'];
export const EMPTY_ADDRESS = { address1: '', address2: '', city: '', zipCode: '', state: '', country: '' };

/** Requests as one principal (a session cookie), optionally in a named org (X-Svc-Org-Id). */
export function caller(app: TestApp, who: { cookie: string }, orgId?: string) {
  const headers = orgId ? { 'x-svc-org-id': orgId } : undefined;
  const send = (method: string) => (path: string, body?: unknown) => app.request(method, path, { cookie: who.cookie, body, headers });
  return { get: send('GET'), post: send('POST'), put: send('PUT'), patch: send('PATCH'), delete: send('DELETE') };
}


/** A service account of the org with `role` and one token, through the service-account stores. */
export async function createServiceAccount(app: TestApp, orgId: string, role: OrgRole = 'Viewer'): Promise<{ id: string; login: string }> {
  const account = await createStoredServiceAccount(app, { orgId, role: role === 'None' ? 'Viewer' : role });
  await issueToken(app, account, { name: 'ci' });
  return { id: account.id, login: account.login };
}

/** A team of the org with the given members and a preferences row, through the team stores. */
export async function createTeam(app: TestApp, orgId: string, memberIds: string[] = []): Promise<string> {
  const team = await createStoredTeam(app, { orgId });
  for (const userId of memberIds) await addTeamMember(app, team, userId);
  await writePreferences(app.db, 'team', team.id, { timezone: 'utc', theme: 'dark' }, app.clock.now());
  return team.id;
}

/** Assigns the org's role `uid` to the user in the org (a fixed role, or a managed one created here). */
export async function assignRole(app: TestApp, orgId: string, userId: string, uid: string, permissions: Array<{ action: string; scope: string }> = []): Promise<void> {
  const now = app.clock.now();
  await app.services.transact(async (tx) => {
    let role = await tx.db('roles').where({ org_id: orgId, uid }).first('id');
    if (!role) {
      const id = await insertRole(tx.db, orgId, { uid, name: uid, displayName: uid, description: '', groupName: '', permissions }, now, true);
      role = { id };
    }
    await tx.db('user_roles').insert({ user_id: userId, role_id: role.id, org_id: orgId, created_at: now });
    tx.policyChanged(orgId);
  });
}

/** The rows that belong to the org, by table. */
export async function orgFootprint(app: TestApp, orgId: string, teamIds: string[] = []) {
  const teamPreferences = teamIds.length ? Number((await app.db('preferences').where('owner_kind', 'team').whereIn('owner_id', teamIds).count({ total: '*' }))[0]!.total) : 0;
  return {
    orgs: await app.count('orgs', { id: orgId }),
    org_members: await app.count('org_members', { org_id: orgId }),
    teams: await app.count('teams', { org_id: orgId }),
    roles: await app.count('roles', { org_id: orgId }),
    user_roles: await app.count('user_roles', { org_id: orgId }),
    api_tokens: await app.count('api_tokens', { org_id: orgId }),
    folders: await app.count('folders', { org_id: orgId }),
    quotas: await app.count('quotas', { scope_kind: 'org', scope_id: orgId }),
    org_preferences: await app.count('preferences', { owner_kind: 'org', owner_id: orgId }),
    team_preferences: teamPreferences,
  };
}

/** Sets the org's `users` quota (what PUT /api/orgs/<id>/quotas/users writes). */
export async function setUsersQuota(app: TestApp, orgId: string, limit: number): Promise<void> {
  await app.db('quotas').insert({ scope_kind: 'org', scope_id: orgId, target: 'users', limit, updated_at: app.clock.now() }).onConflict(['scope_kind', 'scope_id', 'target']).merge(['limit']);
}
