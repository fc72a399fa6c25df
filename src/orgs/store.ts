/** SQL of orgs and their memberships. */
import type { Knex } from 'knex';
import { deleteOrg, removeOrgMember, setMemberRole as setMembershipRole } from '../accesscontrol/policy-writer.ts';
import type { OrgRole } from '../authz/types.ts';
import { inStatementChunks } from '../db/chunks.ts';
import { dialectOf } from '../db/knex.ts';
import type { Tx } from '../db/transaction.ts';
import { findPage, whereContains } from '../db/search.ts';
import { deletePreferences } from '../preferences/store.ts';

export const DEFAULT_ORG_ID = 'org_main';
export const DEFAULT_ORG_NAME = 'Main Org.';

export interface OrgRow {
  id: string;
  name: string;
}

export interface OrgDetailsRow extends OrgRow {
  /** JSON of the postal address, or null when none was ever set. */
  address: string | null;
  billing_email: string | null;
}

export async function findOrgById(db: Knex, id: string): Promise<OrgRow | undefined> {
  return db('orgs').where('id', id).first('id', 'name');
}

export async function insertOrg(db: Knex, org: { id: string; name: string }, now: number): Promise<void> {
  await db('orgs').insert({ id: org.id, name: org.name, policy_revision: 0, created_at: now, updated_at: now });
}

export async function findOrgDetails(db: Knex, id: string): Promise<OrgDetailsRow | undefined> {
  return db('orgs').where('id', id).first('id', 'name', 'address', 'billing_email');
}

export async function findOrgByName(db: Knex, name: string): Promise<OrgRow | undefined> {
  return db('orgs').where('name', name).first('id', 'name');
}

/**
 * Another org whose name equals `name` ignoring case. The unique index compares bytes on MySQL
 * (utf8mb4_bin) and SQLite alike; this keeps "Ops" and "ops" apart from each other for people.
 */
export async function findOrgNameClash(db: Knex, name: string, exceptOrgId?: string): Promise<OrgRow | undefined> {
  const query = db('orgs').whereRaw('LOWER(name) = ?', [name.toLowerCase()]);
  if (exceptOrgId) query.whereNot('id', exceptOrgId);
  return query.first('id', 'name');
}

/** One page of orgs by name; `search` matches part of the name, ignoring case. */
export async function findOrgsPage(
  db: Knex,
  search: string | undefined,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: OrgRow[] }> {
  return findPage<OrgRow>(() => whereContains(db('orgs').select('id', 'name'), ['name'], search), ['name', 'id'], page);
}

export async function updateOrg(db: Knex, id: string, changes: { name?: string; address?: string; billingEmail?: string }, now: number): Promise<void> {
  const row: Record<string, unknown> = { updated_at: now };
  if (changes.name !== undefined) row.name = changes.name;
  if (changes.address !== undefined) row.address = changes.address;
  if (changes.billingEmail !== undefined) row.billing_email = changes.billingEmail;
  await db('orgs').where('id', id).update(row);
}

/**
 * Reads the org inside a transaction and, on MySQL, keeps its row locked until the end: the
 * member changes of one org run one at a time, so two admins demoting each other cannot both
 * pass the "another Admin remains" check. SQLite's single connection is serial anyway.
 */
export async function lockOrg(trx: Knex.Transaction, id: string): Promise<OrgRow | undefined> {
  const query = trx('orgs').where('id', id);
  if (dialectOf(trx) === 'mysql') query.forUpdate();
  return query.first('id', 'name');
}

export interface MemberRow {
  user_id: string;
  login: string;
  email: string | null;
  name: string;
  role: OrgRole;
  user_seen_at: number | string | null;
  session_seen_at: number | string | null;
}

/** The people of an org (service accounts have their own API), with when each was last seen. */
function humanMembers(db: Knex, orgId: string): Knex.QueryBuilder {
  return db('org_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', orgId)
    .where('u.is_service_account', false)
    .select('m.user_id', 'u.login', 'u.email', 'u.name', 'm.role', 'u.last_seen_at as user_seen_at')
    .select(db('sessions as s').max('s.last_seen_at').whereRaw('?? = ??', ['s.user_id', 'u.id']).as('session_seen_at'));
}

const MEMBER_SEARCH_COLUMNS = ['u.login', 'u.email', 'u.name'];

/** One page of the org's people whose login, email or name contains `search`, by login. */
export async function findHumanMembersPage(
  db: Knex,
  orgId: string,
  search: string | undefined,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: MemberRow[] }> {
  return findPage<MemberRow>(() => whereContains(humanMembers(db, orgId), MEMBER_SEARCH_COLUMNS, search), ['u.login', 'm.user_id'], page);
}

/** At most `limit` of the org's people matching `search`, by login: the lookup of a user picker. */
export async function findHumanMembersMatching(db: Knex, orgId: string, search: string | undefined, limit: number): Promise<MemberRow[]> {
  return whereContains(humanMembers(db, orgId), MEMBER_SEARCH_COLUMNS, search)
    .orderBy([{ column: 'u.login' }, { column: 'm.user_id' }])
    .limit(limit);
}

export async function findHumanMember(db: Knex, orgId: string, userId: string): Promise<MemberRow | undefined> {
  return humanMembers(db, orgId).where('m.user_id', userId).first();
}

export async function isOrgMember(db: Knex, orgId: string, userId: string): Promise<boolean> {
  return !!(await db('org_members').where({ org_id: orgId, user_id: userId }).first('user_id'));
}

/** The orgs a user or service account belongs to, the one it joined first first. */
export async function findOrgIdsOfMember(db: Knex, userId: string): Promise<string[]> {
  const rows: Array<{ org_id: string }> = await db('org_members').where('user_id', userId).orderBy('created_at', 'asc').select('org_id');
  return rows.map((row) => row.org_id);
}

/** The people holding the Admin role in the org. */
export async function findHumanAdminIds(db: Knex, orgId: string): Promise<string[]> {
  return db('org_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.org_id': orgId, 'm.role': 'Admin', 'u.is_service_account': false })
    .pluck('m.user_id');
}

export async function setMemberRole(tx: Tx, orgId: string, userId: string, role: OrgRole): Promise<void> {
  await setMembershipRole(tx, orgId, userId, role);
}

/**
 * Users whose default org is `orgId` (only `userId`, when given) move to their oldest other
 * membership, or to none. Runs before the membership or the org goes away.
 */
export async function moveDefaultOrgAway(db: Knex, orgId: string, userId?: string): Promise<void> {
  const otherOrg = db('org_members as om')
    .select('om.org_id')
    .whereRaw('?? = ??', ['om.user_id', 'users.id'])
    .whereNot('om.org_id', orgId)
    .orderBy([{ column: 'om.created_at' }, { column: 'om.org_id' }])
    .limit(1);
  const query = db('users').where('default_org_id', orgId);
  if (userId) query.where('id', userId);
  await query.update({ default_org_id: otherOrg });
}

/**
 * Takes a user out of an org with everything that gave them rights there (Grafana's
 * RemoveOrgUser): team memberships, and through accesscontrol/policy-writer.ts role assignments, their
 * managed role of resource grants and legacy ACL entries, so that being added again starts from
 * the org role alone.
 */
export async function removeOrgMembership(tx: Tx, orgId: string, userId: string): Promise<void> {
  await moveDefaultOrgAway(tx.db, orgId, userId);
  await removeOrgMember(tx, orgId, userId);
}

/**
 * Deletes the org. Foreign keys remove its memberships, teams, roles and their permissions and
 * assignments, folders, dashboards, alert rules, connectors, legacy ACL and pinned tokens; what
 * names the org without one goes here: its service accounts (users that exist only for it), the
 * preferences of the org and its teams, and its quota overrides.
 */
export async function deleteOrgAndDependents(tx: Tx, orgId: string): Promise<{ serviceAccountIds: string[]; teams: number }> {
  const { db } = tx;
  const serviceAccountIds: string[] = await db('org_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.org_id': orgId, 'u.is_service_account': true })
    .pluck('u.id');
  const [teamCount] = await db('teams').where('org_id', orgId).count<Array<{ total: number | string }>>({ total: '*' });
  await moveDefaultOrgAway(db, orgId);
  await deletePreferences(db, 'team', db('teams').where('org_id', orgId).select('id'));
  await deletePreferences(db, 'org', orgId);
  await db('quotas').where({ scope_kind: 'org', scope_id: orgId }).delete();
  await inStatementChunks(serviceAccountIds, async (chunk) => {
    await deletePreferences(db, 'user', chunk);
    await db('users').whereIn('id', chunk).where('is_service_account', true).delete();
  });
  await deleteOrg(tx, orgId);
  return { serviceAccountIds, teams: Number(teamCount?.total ?? 0) };
}

/** The members of the org among `userIds` (users and service accounts), with their logins. */
export async function findMembersByIds(db: Knex, orgId: string, userIds: string[]): Promise<Array<{ id: string; login: string }>> {
  if (userIds.length === 0) return [];
  return db('org_members as m').join('users as u', 'u.id', 'm.user_id').where('m.org_id', orgId).whereIn('m.user_id', userIds).select('u.id', 'u.login');
}
