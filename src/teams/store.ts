/** SQL of teams and their members. A team belongs to one org; every lookup names the org. */
import type { Knex } from 'knex';
import { addTeamMember, deleteTeam as deleteTeamAndGrants, insertTeam as insertTeamRow, removeTeamMember } from '../accesscontrol/policy-writer.ts';
import { newId } from '../db/ids.ts';
import { lockRows } from '../db/row-lock.ts';
import type { Tx } from '../db/transaction.ts';
import { findPage, whereContains } from '../db/search.ts';
import { deletePreferences } from '../preferences/store.ts';

/** Team member permission: 0 = Member, 4 = Admin (manages the team). */
export const TEAM_MEMBER = 0;
export const TEAM_ADMIN = 4;
export type TeamPermission = typeof TEAM_MEMBER | typeof TEAM_ADMIN;

export interface TeamRow {
  id: string;
  org_id: string;
  name: string;
  email: string;
}

export interface TeamMemberRow {
  team_id: string;
  user_id: string;
  permission: number;
  login: string;
  email: string | null;
  name: string;
}

const TEAM_COLUMNS = ['id', 'org_id', 'name', 'email'] as const;

/** `lock`: on MySQL the row stays locked until the transaction ends (src/db/row-lock.ts). */
export async function findTeamInOrg(db: Knex, orgId: string, teamId: string, lock = false): Promise<TeamRow | undefined> {
  return lockRows(db, db('teams').where({ id: teamId, org_id: orgId }), lock ? 'update' : undefined).first(...TEAM_COLUMNS);
}

export async function findTeamByName(db: Knex, orgId: string, name: string): Promise<TeamRow | undefined> {
  return db('teams')
    .where({ org_id: orgId, name })
    .first(...TEAM_COLUMNS);
}

export async function insertTeam(tx: Tx, orgId: string, team: { name: string; email: string }, now: number): Promise<string> {
  const id = newId('team');
  await insertTeamRow(tx, orgId, id, team, now);
  return id;
}

export async function updateTeam(db: Knex, teamId: string, changes: { name?: string; email?: string }, now: number): Promise<void> {
  await db('teams')
    .where('id', teamId)
    .update({ ...changes, updated_at: now });
}

/** A team as its org's list shows it: the row and how many members it has. */
export interface ListedTeam {
  team: TeamRow;
  memberCount: number;
}

/**
 * The org's teams whose name contains `search` (ignoring case; all without one), by name, with
 * their member counts: two queries whatever the number of teams. The caller filters them through
 * the policy and pages what is left.
 */
export async function findTeamListing(db: Knex, orgId: string, search: string | undefined): Promise<ListedTeam[]> {
  const rows: TeamRow[] = await whereContains(db('teams').where('org_id', orgId), ['name'], search)
    .orderBy([{ column: 'name' }, { column: 'id' }])
    .select(...TEAM_COLUMNS);
  if (rows.length === 0) return [];
  const counts = await countMembersOfTeams(db, { orgId });
  return rows.map((team) => ({ team, memberCount: counts.get(team.id) ?? 0 }));
}

/** The teams of `ids`, in the order of `ids`. */
export async function findTeamsByIds(db: Knex, ids: string[]): Promise<TeamRow[]> {
  if (ids.length === 0) return [];
  const rows: TeamRow[] = await db('teams')
    .whereIn('id', ids)
    .select(...TEAM_COLUMNS);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id)).filter((row): row is TeamRow => row !== undefined);
}

/**
 * Member counts in one query, of the teams named or of every team of an org (no list of ids,
 * however many teams it has); a team without members is absent.
 */
export async function countMembersOfTeams(db: Knex, of: string[] | { orgId: string }): Promise<Map<string, number>> {
  if (Array.isArray(of) && of.length === 0) return new Map();
  const members = Array.isArray(of)
    ? db('team_members as tm').whereIn('tm.team_id', of)
    : db('team_members as tm').join('teams as t', 't.id', 'tm.team_id').where('t.org_id', of.orgId);
  const rows: Array<{ team_id: string; total: number | string }> = await members.groupBy('tm.team_id').select('tm.team_id').count({ total: '*' });
  return new Map(rows.map((row) => [row.team_id, Number(row.total)]));
}

function membersQuery(db: Knex, teamId: string): Knex.QueryBuilder {
  return db('team_members as tm')
    .join('users as u', 'u.id', 'tm.user_id')
    .where('tm.team_id', teamId)
    .select('tm.team_id', 'tm.user_id', 'tm.permission', 'u.login', 'u.email', 'u.name');
}

/** One page of the team's members, by login. */
export async function findMembersOfTeamPage(
  db: Knex,
  teamId: string,
  page: { limit: number; offset: number },
): Promise<{ totalCount: number; rows: TeamMemberRow[] }> {
  return findPage<TeamMemberRow>(() => membersQuery(db, teamId), ['u.login', 'u.id'], page);
}

/** `lock`: on MySQL the membership row stays locked until the transaction ends. */
export async function findTeamMember(db: Knex, teamId: string, userId: string, lock = false): Promise<TeamMemberRow | undefined> {
  return lockRows(db, membersQuery(db, teamId).where('tm.user_id', userId), lock ? 'update' : undefined).first();
}

/** The teams of the org the user is a member of, by name. */
export async function findTeamsOfUserInOrg(db: Knex, orgId: string, userId: string): Promise<TeamRow[]> {
  return db('teams as t')
    .join('team_members as tm', 'tm.team_id', 't.id')
    .where({ 't.org_id': orgId, 'tm.user_id': userId })
    .orderBy('t.name')
    .select(...TEAM_COLUMNS.map((column) => `t.${column}`));
}

/** Team memberships are policy data: the member's teams decide the roles it holds. */
export async function insertTeamMember(tx: Tx, team: TeamRow, userId: string, permission: TeamPermission, now: number): Promise<void> {
  await addTeamMember(tx, team, userId, permission, now);
}

/** The permission itself is not policy data: the team-admin rights it stands for are grants (team-admins.ts). */
export async function setTeamMemberPermission(db: Knex, teamId: string, userId: string, permission: TeamPermission): Promise<void> {
  await db('team_members').where({ team_id: teamId, user_id: userId }).update({ permission });
}

export async function deleteTeamMember(tx: Tx, team: TeamRow, userId: string): Promise<void> {
  await removeTeamMember(tx, team, userId);
}

/**
 * The org's teams named like a code-host team (`<org>/<team slug>`), each with the user's
 * permission in it (null: not a member): what team sync may add the user to or remove from.
 */
export async function findProviderNamedTeamsWithMembership(db: Knex, orgId: string, userId: string): Promise<Array<TeamRow & { permission: number | null }>> {
  const rows: Array<TeamRow & { permission: number | string | null }> = await db('teams as t')
    .leftJoin('team_members as tm', (join) => join.on('tm.team_id', '=', 't.id').andOn('tm.user_id', '=', db.raw('?', [userId])))
    .where('t.org_id', orgId)
    .where('t.name', 'like', '%/%')
    .select('t.id', 't.org_id', 't.name', 't.email', 'tm.permission');
  return rows.map((row) => ({ ...row, permission: row.permission === null ? null : Number(row.permission) }));
}

/** The org membership of a user who may join a team: people only (a service account acts alone). */
export async function findOrgMemberForTeam(
  db: Knex,
  orgId: string,
  userId: string,
): Promise<{ id: string; login: string; isServiceAccount: boolean } | undefined> {
  const row: { id: string; login: string; is_service_account: boolean | number } | undefined = await db('org_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where({ 'm.org_id': orgId, 'm.user_id': userId })
    .first('u.id', 'u.login', 'u.is_service_account');
  return row && { id: row.id, login: row.login, isServiceAccount: !!row.is_service_account };
}

/**
 * Deletes the team and everything that names it: its grants (accesscontrol/policy-writer.ts: its
 * managed role, assignments, legacy ACL entries and every permission on `teams:id:<id>`, its
 * admins' among them), members and the preferences row. Returns the members it had.
 */
export async function deleteTeam(tx: Tx, team: TeamRow): Promise<{ memberIds: string[] }> {
  await deletePreferences(tx.db, 'team', team.id);
  return deleteTeamAndGrants(tx, team);
}
