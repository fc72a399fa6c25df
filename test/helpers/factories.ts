/**
 * The one factories module: `build*` functions with overrides build the principals and state a
 * test needs through the stores, as the service would; `api` sends requests as a principal and
 * `passwordLogin` signs in through the form; `auditEntries` reads the audit log and
 * `expectAuditEntry` checks it; `DENIED` is what a caller learns of a policy deny.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { addAssignment, createRole, grantManaged, type GrantHolder, type LegacyAclEntry } from '../../src/accesscontrol/policy-writer.ts';
import { SYSTEM_ACTOR } from '../../src/audit/writer.ts';
import { importLegacyAcl } from '../../src/permissions/legacy-acl.ts';
import type { Permission } from '../../src/accesscontrol/builtin-roles.ts';
import type { OrgRole } from '../../src/authz/types.ts';
import { hashPassword } from '../../src/crypto/password.ts';
import { randomToken, sha256Hex } from '../../src/crypto/tokens.ts';
import { sessionCookieValue } from '../../src/identity/sessions.ts';
import { insertSession } from '../../src/identity/sessions.store.ts';
import { addOrgMember, insertUser, setUserDisabled } from '../../src/identity/users.store.ts';
import { DEFAULT_ORG_ID, insertOrg } from '../../src/orgs/store.ts';
import { seedOrgRoles } from '../../src/accesscontrol/seed.ts';
import { writePreferences, type Preferences } from '../../src/preferences/store.ts';
import { writeQuota } from '../../src/quotas/store.ts';
import { insertServiceAccount, type ServiceAccountRole, type ServiceAccountRow } from '../../src/serviceaccounts/store.ts';
import { issueServiceAccountToken } from '../../src/serviceaccounts/tokens.ts';
import { insertTeam, insertTeamMember, TEAM_ADMIN, type TeamPermission } from '../../src/teams/store.ts';
import { grantTeamAdmin } from '../../src/teams/team-admins.ts';
import type { TestApp } from './app.ts';

export const DEFAULT_PASSWORD = 'correct horse battery staple';
/** What a caller learns of a policy deny. */
export const DENIED = /^permission denied: you need [\w.:]+ to do this$/;
/** What a caller learns when a role would grant more than they hold (the delegation rule). */
export const DELEGATION_DENIED = /^permission denied: (role [\w.:]+|this change) grants permissions you do not hold, and you can only grant what you hold$/;
let defaultHash: Promise<string> | null = null;
let sequence = 0;

export interface UserOverrides {
  login?: string;
  email?: string;
  name?: string;
  password?: string;
  /** No local password: an account that came from an external login. */
  passwordless?: boolean;
  /** The org to join (default org_main); null joins none. */
  orgId?: string | null;
  role?: OrgRole;
  svcAdmin?: boolean;
  /** Disabled through the store: unlike the API, that leaves the session of `cookie` live, as an older release or an operator would. */
  disabled?: boolean;
}

export interface TestUser {
  id: string;
  login: string;
  email: string;
  password: string;
  /** A fresh session cookie header value for this user. */
  cookie: string;
}

export async function createUser(app: TestApp, overrides: UserOverrides = {}): Promise<TestUser> {
  sequence += 1;
  const login =
    overrides.login ??
    `user${sequence}-${randomToken(4)
      .toLowerCase()
      .replace(/[^a-z0-9]/g, 'x')}`;
  const email = overrides.email ?? `${login}@example.test`;
  const password = overrides.password ?? DEFAULT_PASSWORD;
  const passwordHash = overrides.password ? await hashPassword(password) : await (defaultHash ??= hashPassword(DEFAULT_PASSWORD));
  const orgId = overrides.orgId === undefined ? DEFAULT_ORG_ID : overrides.orgId;
  const now = app.clock.now();
  const id = await app.services.transact(async (tx) => {
    const userId = await insertUser(
      tx.db,
      {
        login,
        email,
        name: overrides.name ?? login,
        passwordHash: overrides.passwordless ? null : passwordHash,
        isSvcAdmin: overrides.svcAdmin ?? false,
        defaultOrgId: orgId,
      },
      now,
    );
    if (overrides.disabled) await setUserDisabled(tx.db, userId, true, now);
    if (orgId) await addOrgMember(tx, orgId, userId, overrides.role ?? 'Viewer', now);
    return userId;
  });
  return { id, login, email, password, cookie: await sessionCookie(app, id) };
}

/**
 * An external login link of the user. Links come from identity-provider sign-ins this service does
 * not run (they arrive with imported accounts), so no endpoint makes one: the factory writes the row.
 */
export async function buildAuthLink(app: TestApp, userId: string, link: { id: string; authId: string; createdAt?: number }): Promise<void> {
  const at = link.createdAt ?? app.clock.now();
  await app
    .db('user_auth_links')
    .insert({ id: link.id, user_id: userId, auth_module: 'oauth_generic', auth_id: link.authId, label: 'Generic OIDC', created_at: at, updated_at: at });
}

export async function sessionCookie(app: TestApp, userId: string): Promise<string> {
  const token = randomToken(32);
  await insertSession(app.db, { userId, tokenHash: sha256Hex(token), ip: null, userAgent: null }, app.clock.now());
  return `svc_session=${sessionCookieValue(app.services.config, token)}`;
}

export async function createOrg(app: TestApp, overrides: { id?: string; name?: string } = {}): Promise<string> {
  sequence += 1;
  const id = overrides.id ?? `org_test${sequence}`;
  const now = app.clock.now();
  await app.services.transact(async (tx) => {
    await insertOrg(tx.db, { id, name: overrides.name ?? `Org ${sequence} ${randomToken(3)}` }, now);
    await seedOrgRoles(tx, id, now);
  });
  return id;
}

/** A fresh org with an Admin, an Editor and a Viewer whose default org it is. */
export async function buildOrgWithPeople(app: TestApp, name?: string) {
  const orgId = await createOrg(app, name ? { name } : {});
  const admin = await createUser(app, { orgId, role: 'Admin' });
  const editor = await createUser(app, { orgId, role: 'Editor' });
  const viewer = await createUser(app, { orgId, role: 'Viewer' });
  return { orgId, admin, editor, viewer };
}

export async function addMember(app: TestApp, orgId: string, userId: string, role: OrgRole): Promise<void> {
  await app.services.transact((tx) => addOrgMember(tx, orgId, userId, role, app.clock.now()));
}

export const liveSessions = (app: TestApp, userId: string) => app.count('sessions', { user_id: userId, revoked_at: null });

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
  ip: string | null;
  metadata: Record<string, any> | null;
}

/** The audit entries matching `where` (or of one action), oldest first, metadata parsed. */
export async function auditEntries(app: TestApp, where: string | Partial<Record<keyof AuditRow, unknown>>): Promise<AuditRow[]> {
  const rows = await app
    .db('audit_log')
    .where(typeof where === 'string' ? { action: where } : where)
    .orderBy(['timestamp', 'id'])
    .select('*');
  return rows.map((row: Record<string, any>) => ({ ...row, metadata: row.metadata ? JSON.parse(row.metadata) : null }) as AuditRow);
}

/** The audit entries of changes the policy refused for `permission` (`access.denied`, its `metadata.permission`), oldest first. */
export async function refusalEntries(app: TestApp, permission: string, where: Partial<Record<keyof AuditRow, unknown>> = {}): Promise<AuditRow[]> {
  const entries = await auditEntries(app, { ...where, action: 'access.denied', outcome: 'failure' });
  return entries.filter((entry) => entry.metadata?.permission === permission);
}

/**
 * Expects audit entries matching `where` (exactly `count` of them when given, else at least one), the
 * last of which includes `fields` (a `metadata` field is compared deeply); returns that entry.
 */
export async function expectAuditEntry(
  app: TestApp,
  where: Partial<Record<keyof AuditRow, unknown>>,
  fields: Partial<AuditRow>,
  count?: number,
): Promise<AuditRow> {
  const entries = await auditEntries(app, where);
  if (count === undefined) expect(entries, `${JSON.stringify(where)} entries`).to.have.length.greaterThan(0);
  else expect(entries, `${JSON.stringify(where)} entries`).to.have.length(count);
  const last = entries[entries.length - 1]!;
  expect(last).to.deep.include(fields);
  return last;
}

/** The caller's permissions in the active org (or `orgId`), as GET /api/user/permissions shows them. */
export async function permissionsOf(app: TestApp, user: Pick<TestUser, 'cookie'>, orgId?: string): Promise<Record<string, string[]>> {
  const res = await api(app, user, orgId).get('/api/user/permissions');
  expect(res.status).to.equal(200);
  return res.body;
}

export const buildUser = createUser;
export const buildOrg = createOrg;

/** Requests as `user` (a session cookie), in `orgId` (X-Svc-Org-Id) when given. */
export function api(app: TestApp, user: Pick<TestUser, 'cookie'>, orgId?: string) {
  const headers = orgId ? { 'x-svc-org-id': orgId } : undefined;
  const send = (method: string) => (path: string, body?: unknown) => app.request(method, path, { cookie: user.cookie, body, ...(headers && { headers }) });
  return { get: send('GET'), post: send('POST'), put: send('PUT'), patch: send('PATCH'), delete: send('DELETE') };
}

/** Signs in through the login form (`POST /api/login`) with a login or email and a password. */
export function passwordLogin(app: TestApp, user: string, password: string, headers: Record<string, string> = {}) {
  return app.request('POST', '/api/login', { body: { user, password }, headers });
}

/** A fresh session for a user whose sessions a change revoked. */
export async function signInAgain(app: TestApp, user: TestUser): Promise<TestUser> {
  return { ...user, cookie: await sessionCookie(app, user.id) };
}

export interface TestTeam {
  id: string;
  name: string;
  orgId: string;
}

export interface TeamOverrides {
  orgId?: string;
  name?: string;
  email?: string;
  /** Users added as plain members. */
  members?: string[];
  /** Team preferences to write. */
  preferences?: Partial<Preferences>;
}

export async function buildTeam(app: TestApp, overrides: TeamOverrides = {}): Promise<TestTeam> {
  sequence += 1;
  const orgId = overrides.orgId ?? DEFAULT_ORG_ID;
  const name = overrides.name ?? `team ${sequence} ${randomToken(3)}`;
  const id = await app.services.transact(async (tx) => {
    return insertTeam(tx, orgId, { name, email: overrides.email ?? '' }, app.clock.now());
  });
  const team = { id, name, orgId };
  for (const userId of overrides.members ?? []) await addTeamMember(app, team, userId);
  if (overrides.preferences) await writePreferences(app.db, 'team', id, overrides.preferences, app.clock.now());
  return team;
}

/** Adds the user to the team (or team id); an Admin (4) also gets the team-admin rights, as the API does it. */
export async function addTeamMember(app: TestApp, teamOrId: TestTeam | string, userId: string, permission: TeamPermission = 0): Promise<void> {
  const team = typeof teamOrId === 'string' ? await findTeam(app, teamOrId) : teamOrId;
  const now = app.clock.now();
  await app.services.transact(async (tx) => {
    await insertTeamMember(tx, { id: team.id, org_id: team.orgId, name: team.name, email: '' }, userId, permission, now);
    if (permission === TEAM_ADMIN) await grantTeamAdmin(tx, team.orgId, team.id, userId, now);
  });
}

/** The team-admin actions the user's managed role holds on the team, sorted. */
export async function teamAdminActions(app: TestApp, userId: string, team: TestTeam): Promise<string[]> {
  const rows: Array<{ action: string }> = await app
    .db('role_permissions as p')
    .join('roles as r', 'r.id', 'p.role_id')
    .where({ 'r.org_id': team.orgId, 'r.uid': `managed:users:${userId}:permissions`, 'p.scope': `teams:id:${team.id}` })
    .orderBy('p.action')
    .select('p.action');
  return rows.map((row) => row.action);
}

async function findTeam(app: TestApp, teamId: string): Promise<TestTeam> {
  const row = await app.db('teams').where('id', teamId).first('id', 'org_id', 'name');
  return { id: row.id, orgId: row.org_id, name: row.name };
}

/** Assigns a role of the team's org (a fixed one, say) to the team. */
export async function assignRoleToTeam(app: TestApp, team: TestTeam, roleUid: string): Promise<void> {
  await app.services.transact(async (tx) => {
    const role: { id: number } = await tx.db('roles').where({ org_id: team.orgId, uid: roleUid }).first('id');
    await addAssignment(tx, { kind: 'team', teamId: team.id, orgId: team.orgId }, role.id, app.clock.now());
  });
}

/** Many teams at once (search at scale), named `<prefix> 00001`…; returns their ids in name order. */
export async function buildManyTeams(app: TestApp, orgId: string, count: number, prefix: string): Promise<string[]> {
  const now = app.clock.now();
  const rows = Array.from({ length: count }, (_, i) => ({
    id: `team_bulk${randomToken(6).replace(/[^A-Za-z0-9]/g, 'x')}${i}`,
    org_id: orgId,
    name: `${prefix} ${String(i).padStart(5, '0')}`,
    email: '',
    created_at: now,
    updated_at: now,
  }));
  await app.services.transact(async (tx) => {
    for (let i = 0; i < rows.length; i += 500) await tx.db('teams').insert(rows.slice(i, i + 500));
    tx.policyChanged(orgId);
  });
  return rows.map((row) => row.id);
}

export interface ServiceAccountOverrides {
  orgId?: string;
  name?: string;
  role?: ServiceAccountRole;
  disabled?: boolean;
  hidden?: boolean;
}

export async function buildServiceAccount(app: TestApp, overrides: ServiceAccountOverrides = {}): Promise<ServiceAccountRow> {
  sequence += 1;
  const orgId = overrides.orgId ?? DEFAULT_ORG_ID;
  return app.services.transact(async (tx) => {
    return insertServiceAccount(
      tx,
      {
        orgId,
        name: overrides.name ?? `robot ${sequence}`,
        role: overrides.role ?? 'Viewer',
        isDisabled: overrides.disabled ?? false,
        isHidden: overrides.hidden ?? false,
      },
      app.clock.now(),
    );
  });
}

/** A token of the account: its id and the key, as `POST …/tokens` would return them. */
export async function buildToken(
  app: TestApp,
  account: ServiceAccountRow,
  token: { name?: string; secondsToLive?: number } = {},
): Promise<{ id: string; key: string }> {
  sequence += 1;
  return app.services.transact((tx) =>
    issueServiceAccountToken(
      tx,
      app.services.config,
      account,
      { name: token.name ?? `token ${sequence}`, secondsToLive: token.secondsToLive },
      app.clock.now(),
    ),
  );
}

export interface RoleBody {
  uid: string;
  name: string;
  displayName: string;
  description?: string;
  groupName?: string;
  permissions: Array<{ action: string; scope: string }>;
  global?: boolean;
}

/** A valid custom role body (for `POST /api/access-control/roles`) with a fresh uid; `overrides` replace fields. */
export function buildRole(overrides: Partial<RoleBody> = {}): RoleBody {
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

/** Assigns the org's role `uid` to a user or service account (a fixed role, or a managed one created here with `permissions`). */
export async function assignRole(
  app: TestApp,
  orgId: string,
  userId: string,
  uid: string,
  permissions: Array<{ action: string; scope: string }> = [],
): Promise<void> {
  const now = app.clock.now();
  await app.services.transact(async (tx) => {
    const existing: { id: number } | undefined = await tx.db('roles').where({ org_id: orgId, uid }).first('id');
    const roleId = existing?.id ?? (await createRole(tx, orgId, { uid, name: uid, displayName: uid, description: '', groupName: '', permissions }, now, true));
    await addAssignment(tx, { kind: 'user', userId, orgId }, roleId, now);
  });
}

/** Gives the holder managed permissions in the org, as the resource-permission endpoints do. */
export async function grantManagedPermissions(app: TestApp, orgId: string, holder: GrantHolder, permissions: Permission[]): Promise<string> {
  await app.services.transact((tx) => grantManaged(tx, orgId, holder, permissions, app.clock.now()));
  return holder.kind === 'user'
    ? `managed:users:${holder.userId}:permissions`
    : holder.kind === 'team'
      ? `managed:teams:${holder.teamId}:permissions`
      : `managed:builtins:${holder.role.toLowerCase()}:permissions`;
}

/** Imports `entries` as the org's legacy dashboard ACL, as the admin CLI does (no endpoint writes it). */
export async function importLegacyAclEntries(
  app: TestApp,
  orgId: string,
  entries: Array<Partial<LegacyAclEntry> & Pick<LegacyAclEntry, 'permission'>>,
): Promise<void> {
  const full = entries.map((entry) => ({ dashboardUid: null, folderUid: null, userId: null, teamId: null, role: null, ...entry }));
  await importLegacyAcl(app.services, SYSTEM_ACTOR, orgId, full);
}

/** Sets the org's `users` quota, as PUT /api/orgs/<id>/quotas/users does. */
export async function setUsersQuota(app: TestApp, orgId: string, limit: number): Promise<void> {
  await writeQuota(app.db, 'org', orgId, 'users', limit, app.clock.now());
}

/** What the org tests compare. */
export const ORG_FIELDS = ['id', 'name', 'address', 'billingEmail'];
export const MEMBER_FIELDS = ['userId', 'login', 'email', 'name', 'role', 'avatarUrl', 'lastSeenAt'];
export const EMPTY_ADDRESS = { address1: '', address2: '', city: '', zipCode: '', state: '', country: '' };

/** The rows that belong to the org, by table. */
export async function orgFootprint(app: TestApp, orgId: string, teamIds: string[] = []) {
  const teamPreferences = teamIds.length
    ? Number((await app.db('preferences').where('owner_kind', 'team').whereIn('owner_id', teamIds).count({ total: '*' }))[0]!.total)
    : 0;
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
