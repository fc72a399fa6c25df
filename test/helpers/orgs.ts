/** What the org tests share: a caller per principal, audit lookups, and org-scoped state built through the stores. */
import { insertRole } from '../../src/accesscontrol/store.ts';
import type { OrgRole } from '../../src/authz/types.ts';
import { randomToken } from '../../src/crypto/tokens.ts';
import { newTokenKey } from '../../src/identity/api-tokens.ts';
import { insertApiToken } from '../../src/identity/api-tokens.store.ts';
import { addOrgMember } from '../../src/identity/users.store.ts';
import type { TestApp } from './app.ts';

export const ORG_FIELDS = ['id', 'name', 'address', 'billingEmail'];
export const MEMBER_FIELDS = ['userId', 'login', 'email', 'name', 'role', 'avatarUrl', 'lastSeenAt'];
export const EMPTY_ADDRESS = { address1: '', address2: '', city: '', zipCode: '', state: '', country: '' };
export const DENIED = /^permission denied: you need [\w.:]+ to do this$/;

/** Requests as one principal (a session cookie), optionally in a named org (X-Svc-Org-Id). */
export function caller(app: TestApp, who: { cookie: string }, orgId?: string) {
  const headers = orgId ? { 'x-svc-org-id': orgId } : undefined;
  const send = (method: string) => (path: string, body?: unknown) => app.request(method, path, { cookie: who.cookie, body, headers });
  return { get: send('GET'), post: send('POST'), put: send('PUT'), patch: send('PATCH'), delete: send('DELETE') };
}

export interface AuditRow {
  action: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  org_id: string | null;
  target_type: string | null;
  target_id: string | null;
  target_name: string | null;
  outcome: string;
  metadata: Record<string, any> | null;
}

/** The audit entries matching `where`, oldest first, metadata parsed. */
export async function auditEntries(app: TestApp, where: Partial<Record<keyof AuditRow, unknown>>): Promise<AuditRow[]> {
  const rows = await app.db('audit_log').where(where).orderBy(['timestamp', 'id']).select('*');
  return rows.map((row: Record<string, any>) => ({ ...row, metadata: row.metadata ? JSON.parse(row.metadata) : null }) as AuditRow);
}

export const liveSessions = (app: TestApp, userId: string) => app.count('sessions', { user_id: userId, revoked_at: null });

/** A service account of the org (a user flagged as one, member with `role`) with one token. */
export async function createServiceAccount(app: TestApp, orgId: string, role: OrgRole = 'Viewer'): Promise<{ id: string; login: string }> {
  const login = `sa-bot-${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  const now = app.clock.now();
  const id = `usr_sa${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  await app.services.transact(async (tx) => {
    await tx.db('users').insert({ id, login, email: null, name: login, password_hash: null, is_svc_admin: false, is_disabled: false, is_service_account: true, default_org_id: orgId, created_at: now, updated_at: now });
    await addOrgMember(tx.db, orgId, id, role, now);
    await insertApiToken(tx.db, { kind: 'sa', userId: id, orgId, name: 'ci', tokenHash: newTokenKey('sa').hash, expiresAt: null }, now);
    tx.policyChanged(orgId, { kind: 'member', userId: id });
  });
  return { id, login };
}

/** A team of the org with the given members and its own preferences row. */
export async function createTeam(app: TestApp, orgId: string, memberIds: string[] = []): Promise<string> {
  const id = `team_${randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  const now = app.clock.now();
  await app.services.transact(async (tx) => {
    await tx.db('teams').insert({ id, org_id: orgId, name: `Team ${id}`, email: '', created_at: now, updated_at: now });
    for (const userId of memberIds) await tx.db('team_members').insert({ team_id: id, user_id: userId, permission: 0, created_at: now });
    await tx.db('preferences').insert({ owner_kind: 'team', owner_id: id, home_dashboard_uid: '', timezone: 'utc', theme: 'dark', updated_at: now });
    tx.policyChanged(orgId);
  });
  return id;
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
