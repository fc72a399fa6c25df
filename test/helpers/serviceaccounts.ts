/** Service accounts and their tokens for tests, straight through the stores. */
import { DEFAULT_ORG_ID } from '../../src/orgs/store.ts';
import { insertServiceAccount, type ServiceAccountRole, type ServiceAccountRow } from '../../src/serviceaccounts/store.ts';
import { issueServiceAccountToken } from '../../src/serviceaccounts/tokens.ts';
import type { TestApp } from './app.ts';

let sequence = 0;

export interface ServiceAccountOverrides {
  orgId?: string;
  name?: string;
  role?: ServiceAccountRole;
  disabled?: boolean;
  hidden?: boolean;
}

export async function createServiceAccount(app: TestApp, overrides: ServiceAccountOverrides = {}): Promise<ServiceAccountRow> {
  sequence += 1;
  const orgId = overrides.orgId ?? DEFAULT_ORG_ID;
  return app.services.transact(async (tx) => {
    const account = await insertServiceAccount(
      tx.db,
      { orgId, name: overrides.name ?? `robot ${sequence}`, role: overrides.role ?? 'Viewer', isDisabled: overrides.disabled ?? false, isHidden: overrides.hidden ?? false },
      app.clock.now(),
    );
    tx.policyChanged(orgId, { kind: 'member', userId: account.id });
    return account;
  });
}

/** A token of the account: its id and the key, as `POST …/tokens` would return them. */
export async function issueToken(app: TestApp, account: ServiceAccountRow, token: { name?: string; secondsToLive?: number } = {}): Promise<{ id: string; key: string }> {
  sequence += 1;
  return app.services.transact((tx) => issueServiceAccountToken(tx, app.services.config, account, { name: token.name ?? `token ${sequence}`, secondsToLive: token.secondsToLive }, app.clock.now()));
}

/** Assigns a role the org already has (a fixed one, say) directly to a user or account. */
export async function assignOrgRole(app: TestApp, orgId: string, userId: string, roleUid: string): Promise<void> {
  await app.services.transact(async (tx) => {
    const role = await tx.db('roles').where({ org_id: orgId, uid: roleUid }).first('id');
    if (!role) throw new Error(`no role ${roleUid} in ${orgId}`);
    await tx.db('user_roles').insert({ user_id: userId, role_id: role.id, org_id: orgId, created_at: app.clock.now() });
    tx.policyChanged(orgId, { kind: 'member', userId });
  });
}

export async function auditEntries(app: TestApp, action: string): Promise<Array<Record<string, any>>> {
  return app.db('audit_log').where('action', action).orderBy(['timestamp', 'id']).select('*');
}
