/** SQL of users and org memberships. */
import type { Knex } from 'knex';
import type { OrgRole } from '../authz/types.ts';
import { newId } from '../db/ids.ts';
import type { PrincipalUser } from './principal.ts';

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
  theme: string;
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

export async function countHumanUsers(db: Knex): Promise<number> {
  const [row] = await db('users').where('is_service_account', false).count<Array<{ total: number | string }>>({ total: '*' });
  return Number(row?.total ?? 0);
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
    theme: '',
    created_at: now,
    updated_at: now,
  });
  return id;
}

export async function addOrgMember(db: Knex, orgId: string, userId: string, role: OrgRole, now: number): Promise<void> {
  await db('org_members').insert({ org_id: orgId, user_id: userId, role, created_at: now });
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
