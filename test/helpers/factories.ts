/** Factories with overrides: build the principals and state a test needs, straight through the stores. */
import type { OrgRole } from '../../src/authz/types.ts';
import { hashPassword } from '../../src/crypto/password.ts';
import { randomToken, sha256Hex } from '../../src/crypto/tokens.ts';
import { sessionCookieValue } from '../../src/identity/sessions.ts';
import { insertSession } from '../../src/identity/sessions.store.ts';
import { addOrgMember, insertUser } from '../../src/identity/users.store.ts';
import { DEFAULT_ORG_ID, insertOrg } from '../../src/orgs/store.ts';
import { seedOrgRoles } from '../../src/accesscontrol/seed.ts';
import type { TestApp } from './app.ts';

export const DEFAULT_PASSWORD = 'correct horse battery staple';
/** What a caller learns of a policy deny. */
export const DENIED = /^permission denied: you need [\w.:]+ to do this$/;
let defaultHash: Promise<string> | null = null;
let sequence = 0;

export interface UserOverrides {
  login?: string;
  email?: string;
  name?: string;
  password?: string;
  /** The org to join (default org_main); null joins none. */
  orgId?: string | null;
  role?: OrgRole;
  svcAdmin?: boolean;
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
  const login = overrides.login ?? `user${sequence}-${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  const email = overrides.email ?? `${login}@example.test`;
  const password = overrides.password ?? DEFAULT_PASSWORD;
  const passwordHash = overrides.password ? await hashPassword(password) : await (defaultHash ??= hashPassword(DEFAULT_PASSWORD));
  const orgId = overrides.orgId === undefined ? DEFAULT_ORG_ID : overrides.orgId;
  const now = app.clock.now();
  const id = await app.services.transact(async (tx) => {
    const userId = await insertUser(tx.db, { login, email, name: overrides.name ?? login, passwordHash, isSvcAdmin: overrides.svcAdmin ?? false, defaultOrgId: orgId }, now);
    if (overrides.disabled) await tx.db('users').where('id', userId).update({ is_disabled: true });
    if (orgId) {
      await addOrgMember(tx.db, orgId, userId, overrides.role ?? 'Viewer', now);
      tx.policyChanged(orgId);
    }
    return userId;
  });
  return { id, login, email, password, cookie: await sessionCookie(app, id) };
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

export async function addMember(app: TestApp, orgId: string, userId: string, role: OrgRole): Promise<void> {
  await app.services.transact(async (tx) => {
    await addOrgMember(tx.db, orgId, userId, role, app.clock.now());
    tx.policyChanged(orgId);
  });
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
  metadata: Record<string, any> | null;
}

/** The audit entries matching `where`, oldest first, metadata parsed. */
export async function auditEntries(app: TestApp, where: Partial<Record<keyof AuditRow, unknown>>): Promise<AuditRow[]> {
  const rows = await app.db('audit_log').where(where).orderBy(['timestamp', 'id']).select('*');
  return rows.map((row: Record<string, any>) => ({ ...row, metadata: row.metadata ? JSON.parse(row.metadata) : null }) as AuditRow);
}
