/**
 * SQL of service accounts: users rows with is_service_account, each a member of exactly one
 * org (its role is that membership's). A hidden one stands behind a legacy API key.
 */
import type { Knex } from 'knex';
import { addOrgMember, deleteUser, setMemberRole } from '../accesscontrol/policy-writer.ts';
import { builtinRoleUids } from '../authz/document.ts';
import type { DelegatedPermission, OrgRole } from '../authz/types.ts';
import { newId } from '../db/ids.ts';
import { lockRows } from '../db/row-lock.ts';
import type { Tx } from '../db/transaction.ts';
import { findPage, whereContains } from '../db/search.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { DEFAULT_ORG_ID } from '../orgs/store.ts';
import { deletePreferences } from '../preferences/store.ts';

export const SERVICE_ACCOUNT_ROLES = ['Admin', 'Editor', 'Viewer'] as const;
export type ServiceAccountRole = (typeof SERVICE_ACCOUNT_ROLES)[number];

export interface ServiceAccountRow {
  id: string;
  login: string;
  name: string;
  is_disabled: boolean | number;
  is_hidden: boolean | number;
  org_id: string;
  role: ServiceAccountRole;
}

/** Longest slug kept in a login, so `sa-<orgId>-<slug>` stays within the 190 of users.login. */
const MAX_SLUG_LENGTH = 140;

function slugOf(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/^-+|-+$/g, '');
}

/**
 * `sa-<slug of name>` in org_main and `sa-<orgId>-<slug>` elsewhere (Grafana's scheme): logins
 * are unique across the server, names only within an org.
 */
export function serviceAccountLogin(orgId: string, name: string): string {
  const slug = slugOf(name);
  if (!slug) throw new BadRequestError('the service account name needs at least one letter or digit');
  return (orgId === DEFAULT_ORG_ID ? `sa-${slug}` : `sa-${orgId}-${slug}`).toLowerCase();
}

function accounts(db: Knex, orgId: string): Knex.QueryBuilder {
  return db('users as u')
    .join('org_members as m', 'm.user_id', 'u.id')
    .where({ 'u.is_service_account': true, 'm.org_id': orgId })
    .select('u.id', 'u.login', 'u.name', 'u.is_disabled', 'u.is_hidden', 'm.org_id', 'm.role');
}

/** `lock`: on MySQL the account's rows stay locked until the transaction ends (src/db/row-lock.ts). */
export async function findServiceAccount(db: Knex, orgId: string, id: string, lock = false): Promise<ServiceAccountRow | undefined> {
  return lockRows(db, accounts(db, orgId).where('u.id', id), lock ? 'update' : undefined).first();
}

/** The account of the org, else 404: an account of another org is not found either. */
export async function findServiceAccountOrFail(db: Knex, orgId: string, id: string, lock = false): Promise<ServiceAccountRow> {
  const account = await findServiceAccount(db, orgId, id, lock);
  if (!account) throw new NotFoundError(`service account ${id} not found`);
  return account;
}

/**
 * Account names are unique per org ignoring case, which no index holds: a rename takes turns on
 * the org's row with the other renames and with the creates (which lock it for their quota), so
 * the name check of each sees the names committed before it.
 */
export async function lockServiceAccountNames(db: Knex, orgId: string): Promise<void> {
  await lockRows(db, db('orgs').where('id', orgId), 'update').first('id');
}

/** The account of the org named `name`, ignoring case (names are unique per org). */
export async function findServiceAccountByName(db: Knex, orgId: string, name: string): Promise<ServiceAccountRow | undefined> {
  return accounts(db, orgId).whereRaw('LOWER(u.name) = ?', [name.toLowerCase()]).first();
}

/** One page of the org's visible accounts by name; `search` matches name or login, ignoring case. */
export async function findServiceAccountsPage(
  db: Knex,
  orgId: string,
  search: string | undefined,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: ServiceAccountRow[] }> {
  const matching = () => whereContains(accounts(db, orgId).where('u.is_hidden', false), ['u.name', 'u.login'], search);
  return findPage<ServiceAccountRow>(matching, ['u.name', 'u.id'], page);
}

export interface NewServiceAccount {
  orgId: string;
  name: string;
  role: ServiceAccountRole;
  isDisabled: boolean;
  isHidden: boolean;
}

/**
 * Inserts the account and its membership, refusing (409) a name the org already has or a login
 * taken on the server; the unique login is the backstop when two creates race.
 */
export async function insertServiceAccount(tx: Tx, account: NewServiceAccount, now: number): Promise<ServiceAccountRow> {
  const { db } = tx;
  const row: ServiceAccountRow = {
    id: newId('usr'),
    login: serviceAccountLogin(account.orgId, account.name),
    name: account.name,
    is_disabled: account.isDisabled,
    is_hidden: account.isHidden,
    org_id: account.orgId,
    role: account.role,
  };
  if ((await findServiceAccountByName(db, account.orgId, account.name)) || (await isLoginTaken(db, row.login))) {
    throw new ConflictError(`a service account named "${account.name}" (login ${row.login}) already exists`);
  }
  await db('users').insert({
    id: row.id,
    login: row.login,
    email: null,
    name: row.name,
    password_hash: null,
    is_svc_admin: false,
    is_disabled: account.isDisabled,
    is_service_account: true,
    is_hidden: account.isHidden,
    default_org_id: account.orgId,
    created_at: now,
    updated_at: now,
  });
  await addOrgMember(tx, account.orgId, row.id, account.role, now);
  return row;
}

export async function updateServiceAccount(
  tx: Tx,
  account: ServiceAccountRow,
  changes: { name?: string; role?: ServiceAccountRole; isDisabled?: boolean },
  now: number,
): Promise<void> {
  const userChanges: Record<string, unknown> = { updated_at: now };
  if (changes.name !== undefined) userChanges.name = changes.name;
  if (changes.isDisabled !== undefined) userChanges.is_disabled = changes.isDisabled;
  await tx.db('users').where('id', account.id).update(userChanges);
  if (changes.role !== undefined) {
    await setMemberRole(tx, account.org_id, account.id, changes.role);
  }
}

/** Whether a user or account holds `login` (logins are unique server-wide). */
async function isLoginTaken(db: Knex, login: string): Promise<boolean> {
  return !!(await db('users').where('login', login).first('id'));
}

/**
 * Deletes the account. Foreign keys remove its membership, tokens, role assignments and team
 * memberships; its grants go through accesscontrol/policy-writer.ts, its preferences here.
 */
export async function deleteServiceAccount(tx: Tx, account: ServiceAccountRow): Promise<void> {
  await deletePreferences(tx.db, 'user', account.id);
  await deleteUser(tx, account.id, { serviceAccount: true });
}

/**
 * Every permission an org role carries in the org (its basic role and the org's managed
 * overrides of it): what a caller must hold to hand that role to a service account.
 */
export async function permissionsOfOrgRole(db: Knex, orgId: string, role: OrgRole): Promise<DelegatedPermission[]> {
  const rows: DelegatedPermission[] = await db('roles as r')
    .join('role_permissions as p', 'p.role_id', 'r.id')
    .whereIn('r.uid', builtinRoleUids()[role])
    .where((q) => q.where('r.org_id', orgId).orWhereNull('r.org_id'))
    .distinct('p.action', 'p.scope')
    .orderBy([{ column: 'p.action' }, { column: 'p.scope' }]);
  return rows.map((row) => ({ action: row.action, scope: row.scope }));
}

export interface LegacyKeyRow {
  id: string;
  name: string;
  expires_at: number | string | null;
  revoked_at: number | string | null;
  service_account_id: string;
  role: ServiceAccountRole;
}

/** The tokens of the org's hidden accounts: what the legacy `/api/auth/keys` shim calls API keys. */
function legacyKeys(db: Knex, orgId: string): Knex.QueryBuilder {
  return db('api_tokens as t')
    .join('users as u', 'u.id', 't.user_id')
    .join('org_members as m', 'm.user_id', 'u.id')
    .where({ 't.kind': 'sa', 'u.is_service_account': true, 'u.is_hidden': true, 'm.org_id': orgId })
    .select('t.id', 't.name', 't.expires_at', 't.revoked_at', 'u.id as service_account_id', 'm.role');
}

/** One page of the org's unrevoked legacy keys by name; expired ones only when asked. */
export async function findLegacyKeysPage(
  db: Knex,
  orgId: string,
  now: number,
  includeExpired: boolean,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: LegacyKeyRow[] }> {
  const matching = () => {
    const query = legacyKeys(db, orgId).whereNull('t.revoked_at');
    if (!includeExpired) query.where((q) => q.whereNull('t.expires_at').orWhere('t.expires_at', '>', now));
    return query;
  };
  return findPage<LegacyKeyRow>(matching, ['t.name', 't.id'], page);
}

export async function findLegacyKey(db: Knex, orgId: string, tokenId: string): Promise<LegacyKeyRow | undefined> {
  return legacyKeys(db, orgId).where('t.id', tokenId).first();
}
