/** Factories and request helpers of the role and role-assignment tests. */
import { randomBytes } from 'node:crypto';
import type { TestApp } from './app.ts';
import { auditEntries, sessionCookie, type TestUser } from './factories.ts';
import { addTeamMember as addStoredTeamMember, createTeam as createStoredTeam } from './teams.ts';

export interface RoleBody {
  uid: string;
  name: string;
  displayName: string;
  description?: string;
  groupName?: string;
  permissions: Array<{ action: string; scope: string }>;
  global?: boolean;
}

/** A valid custom role body with a fresh uid; `overrides` replace fields. */
export function customRole(overrides: Partial<RoleBody> = {}): RoleBody {
  const slug = `r${randomBytes(4).toString('hex')}`;
  return {
    uid: `custom:${slug}`,
    name: `custom:${slug}`,
    displayName: `Role ${slug}`,
    description: 'made by a test',
    groupName: 'Tests',
    permissions: [{ action: 'dashboards:read', scope: 'dashboards:*' }],
    ...overrides,
  };
}

/** Requests as `user` (a cookie header value), in `orgId` when given. */
export function api(app: TestApp, user: Pick<TestUser, 'cookie'>, orgId?: string) {
  const headers = orgId ? { 'x-svc-org-id': orgId } : undefined;
  const send = (method: string) => (path: string, body?: unknown) => app.request(method, path, { cookie: user.cookie, body, ...(headers && { headers }) });
  return { get: send('GET'), post: send('POST'), put: send('PUT'), patch: send('PATCH'), delete: send('DELETE') };
}

/** A team of `orgId`, through the team stores; its id. */
export async function createTeam(app: TestApp, orgId = 'org_main', name?: string): Promise<string> {
  return (await createStoredTeam(app, name ? { orgId, name } : { orgId })).id;
}

export async function addTeamMember(app: TestApp, teamId: string, userId: string): Promise<void> {
  const team = await app.db('teams').where('id', teamId).first('id', 'org_id', 'name');
  await addStoredTeamMember(app, { id: team.id, orgId: team.org_id, name: team.name }, userId);
}

/** Assigns the org's role `uid` to the user directly in the tables, as a fixture. */
export async function grantRole(app: TestApp, userId: string, uid: string, orgId = 'org_main'): Promise<void> {
  await app.services.transact(async (tx) => {
    const role = await tx.db('roles').where({ uid, org_id: orgId }).first('id');
    await tx.db('user_roles').insert({ user_id: userId, role_id: role.id, org_id: orgId, created_at: app.clock.now() });
    tx.policyChanged(orgId, { kind: 'member', userId });
  });
}

/** A fresh session for a user whose sessions a change revoked. */
export async function signInAgain(app: TestApp, user: TestUser): Promise<TestUser> {
  return { ...user, cookie: await sessionCookie(app, user.id) };
}


/** The audit entries of `action` on `targetId`, oldest first, metadata parsed. */
export async function auditsOf(app: TestApp, action: string, targetId: string): Promise<Array<Record<string, any>>> {
  return auditEntries(app, { action, target_id: targetId });
}
