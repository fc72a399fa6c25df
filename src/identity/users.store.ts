/** SQL of users and org memberships. */
import type { Knex } from 'knex';
import { addOrgMember as addMembership, deleteUser as deleteUserAndGrants } from '../accesscontrol/policy-writer.ts';
import type { OrgRole } from '../authz/types.ts';
import { newId } from '../db/ids.ts';
import { dialectOf } from '../db/knex.ts';
import type { Tx } from '../db/transaction.ts';
import { findPage, whereContains } from '../db/search.ts';
import { deletePreferences } from '../preferences/store.ts';
import type { PrincipalUser } from '../principal.ts';

export interface UserRow {
  id: string;
  login: string;
  email: string | null;
  name: string;
  password_hash: string | null;
  is_svc_admin: boolean | number;
  is_disabled: boolean | number;
  is_service_account: boolean | number;
  default_org_id: string | null;
  created_at: number | string;
  updated_at: number | string;
}

export function toPrincipalUser(row: UserRow): PrincipalUser {
  return {
    id: row.id,
    login: row.login,
    email: row.email,
    name: row.name,
    isSvcAdmin: !!row.is_svc_admin,
    isDisabled: !!row.is_disabled,
    isServiceAccount: !!row.is_service_account,
    defaultOrgId: row.default_org_id,
  };
}

/** Whether any person (not a service account) has an account: setup is open until one does. */
export async function anyHumanUserExists(db: Knex): Promise<boolean> {
  return !!(await db('users').where('is_service_account', false).first('id'));
}

export async function findUserById(db: Knex, id: string): Promise<UserRow | undefined> {
  return db('users').where('id', id).first();
}

export interface NewUser {
  login: string;
  email: string | null;
  name: string;
  passwordHash: string | null;
  isSvcAdmin?: boolean;
  defaultOrgId: string | null;
}

export async function insertUser(db: Knex, user: NewUser, now: number): Promise<string> {
  const id = newId('usr');
  await db('users').insert({
    id,
    login: user.login.toLowerCase(),
    email: user.email?.toLowerCase() ?? null,
    name: user.name,
    password_hash: user.passwordHash,
    is_svc_admin: user.isSvcAdmin ?? false,
    is_disabled: false,
    is_service_account: false,
    default_org_id: user.defaultOrgId,
    created_at: now,
    updated_at: now,
  });
  return id;
}

export async function addOrgMember(tx: Tx, orgId: string, userId: string, role: OrgRole, now: number): Promise<void> {
  await addMembership(tx, orgId, userId, role, now);
}

export async function findMembershipsOfUser(db: Knex, userId: string): Promise<Array<{ orgId: string; name: string; role: OrgRole }>> {
  const rows: Array<{ org_id: string; name: string; role: OrgRole }> = await db('org_members as m')
    .join('orgs as o', 'o.id', 'm.org_id')
    .where('m.user_id', userId)
    .orderBy('o.name')
    .select('m.org_id', 'o.name', 'm.role');
  return rows.map((row) => ({ orgId: row.org_id, name: row.name, role: row.role }));
}

/** The user whose login or email is `loginOrEmail` (both are stored lower-cased). */
export async function findUserByLoginOrEmail(db: Knex, loginOrEmail: string): Promise<UserRow | undefined> {
  const value = loginOrEmail.trim().toLowerCase();
  return db('users').where('login', value).orWhere('email', value).orderByRaw('CASE WHEN login = ? THEN 0 ELSE 1 END', [value]).first();
}

/** The user with this email (stored lower-cased); never matched by login. */
export async function findUserByEmail(db: Knex, email: string): Promise<UserRow | undefined> {
  return db('users').where('email', email.trim().toLowerCase()).first();
}

/** Changes name, email and login; uniqueness is the database's (a duplicate becomes a 409). */
export async function updateUserProfile(db: Knex, userId: string, profile: { name?: string; email?: string; login?: string }, now: number): Promise<void> {
  const changes: Record<string, unknown> = { updated_at: now };
  if (profile.name !== undefined) changes.name = profile.name;
  if (profile.email !== undefined) changes.email = profile.email.toLowerCase();
  if (profile.login !== undefined) changes.login = profile.login.toLowerCase();
  await db('users').where('id', userId).update(changes);
}

/** A person, not a service account: the admin user endpoints know no other kind. */
export async function findHumanUserById(db: Knex, id: string): Promise<UserRow | undefined> {
  return db('users').where({ id, is_service_account: false }).first();
}

/** One page of people (no service accounts) by login; `search` matches login, email or name, ignoring case. */
export async function findHumanUsersPage(
  db: Knex,
  search: string | undefined,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: UserRow[] }> {
  const matching = () => whereContains(db('users').where('is_service_account', false).select('*'), ['login', 'email', 'name'], search);
  return findPage<UserRow>(matching, ['login', 'id'], page);
}

/** The memberships of several users in one query, by user id. */
export async function findMembershipsOfUsers(db: Knex, userIds: string[]): Promise<Map<string, Array<{ orgId: string; name: string; role: OrgRole }>>> {
  const byUser = new Map<string, Array<{ orgId: string; name: string; role: OrgRole }>>();
  if (userIds.length === 0) return byUser;
  const rows: Array<{ user_id: string; org_id: string; name: string; role: OrgRole }> = await db('org_members as m')
    .join('orgs as o', 'o.id', 'm.org_id')
    .whereIn('m.user_id', userIds)
    .orderBy('o.name')
    .select('m.user_id', 'm.org_id', 'o.name', 'm.role');
  for (const row of rows) {
    const orgs = byUser.get(row.user_id) ?? [];
    orgs.push({ orgId: row.org_id, name: row.name, role: row.role });
    byUser.set(row.user_id, orgs);
  }
  return byUser;
}

/** The labels of the external logins linked to each of several users, sorted, each once. */
export async function findAuthLabelsOfUsers(db: Knex, userIds: string[]): Promise<Map<string, string[]>> {
  const byUser = new Map<string, string[]>();
  if (userIds.length === 0) return byUser;
  const rows: Array<{ user_id: string; auth_module: string; label: string }> = await db('user_auth_links')
    .whereIn('user_id', userIds)
    .select('user_id', 'auth_module', 'label');
  for (const row of rows) {
    const labels = byUser.get(row.user_id) ?? [];
    const label = row.label || row.auth_module;
    if (!labels.includes(label)) labels.push(label);
    byUser.set(row.user_id, labels.sort());
  }
  return byUser;
}

/**
 * A user other than `exceptUserId` whose login or email equals one of `values` (lower-cased):
 * the login form accepts either, so a new login must not be someone's email and vice versa.
 */
export async function findUserClashing(db: Knex, values: string[], exceptUserId?: string): Promise<UserRow | undefined> {
  const wanted = [...new Set(values.map((value) => value.toLowerCase()))];
  if (wanted.length === 0) return undefined;
  const query = db('users').where((q) => q.whereIn('login', wanted).orWhereIn('email', wanted));
  if (exceptUserId) query.whereNot('id', exceptUserId);
  return query.first();
}

export async function setDefaultOrg(db: Knex, userId: string, orgId: string, now: number): Promise<void> {
  await db('users').where('id', userId).update({ default_org_id: orgId, updated_at: now });
}

export async function markUserSeen(db: Knex, userId: string, now: number): Promise<void> {
  await db('users').where('id', userId).update({ last_seen_at: now });
}

export async function setUserPassword(db: Knex, userId: string, passwordHash: string, now: number): Promise<void> {
  await db('users').where('id', userId).update({ password_hash: passwordHash, updated_at: now });
}

export async function setUserServerAdmin(db: Knex, userId: string, isSvcAdmin: boolean, now: number): Promise<void> {
  await db('users').where('id', userId).update({ is_svc_admin: isSvcAdmin, updated_at: now });
}

export async function setUserDisabled(db: Knex, userId: string, isDisabled: boolean, now: number): Promise<void> {
  await db('users').where('id', userId).update({ is_disabled: isDisabled, updated_at: now });
}

/** The user's row, locked on MySQL until the transaction ends (SQLite runs one transaction at a time). */
export async function lockUser(db: Knex, userId: string): Promise<UserRow | undefined> {
  const query = db('users').where('id', userId);
  if (dialectOf(db) === 'mysql') query.forUpdate();
  return query.first();
}

/**
 * The ids of the enabled server admins (people only). On MySQL the rows stay locked until the
 * transaction ends, so two admins demoting, disabling or deleting each other at once cannot
 * leave the server without one; SQLite runs transactions one at a time anyway.
 */
export async function lockEnabledServerAdminIds(db: Knex): Promise<string[]> {
  const query = db('users').where({ is_svc_admin: true, is_disabled: false, is_service_account: false }).select('id');
  if (dialectOf(db) === 'mysql') query.forUpdate();
  const rows: Array<{ id: string }> = await query;
  return rows.map((row) => row.id);
}

/**
 * Deletes the user. Foreign keys remove memberships, teams, sessions, tokens and login links;
 * its grants go through accesscontrol/policy-writer.ts and its preferences here. Every org it belonged
 * to re-reads it.
 */
export async function deleteUser(tx: Tx, userId: string): Promise<boolean> {
  await deletePreferences(tx.db, 'user', userId);
  return deleteUserAndGrants(tx, userId);
}
