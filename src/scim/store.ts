/**
 * SQL of SCIM: the accounts and teams an org provisioned (scim_users, scim_groups) with the user
 * and team rows they stand for. Every lookup starts from the link table of the token's org, so
 * an id, an externalId or a filter only ever reaches what that org provisioned. Filters arrive
 * checked (filter.ts) and become where clauses with bound values; columns are constants here.
 */
import type { Knex } from 'knex';
import { findPage, type PageWindow } from '../db/search.ts';
import type { FilterTerm } from './filter.ts';

export interface ScimUserRow {
  id: string;
  login: string;
  email: string | null;
  name: string;
  is_disabled: boolean | number;
  external_id: string | null;
  created_at: number | string;
  updated_at: number | string;
}

export interface ScimGroupRow {
  id: string;
  org_id: string;
  name: string;
  email: string;
  external_id: string | null;
  created_at: number | string;
  updated_at: number | string;
}

/** How a filterable attribute is stored: its column, and whether it compares case-exact (RFC 7643 `caseExact`). */
interface FilterColumn {
  column: string;
  caseExact: boolean;
}

export const USER_FILTER_ATTRIBUTES = { username: 'userName', 'emails.value': 'email', externalid: 'externalId', displayname: 'displayName' } as const;
export const GROUP_FILTER_ATTRIBUTES = { displayname: 'displayName', externalid: 'externalId' } as const;
type UserFilterKey = (typeof USER_FILTER_ATTRIBUTES)[keyof typeof USER_FILTER_ATTRIBUTES];
type GroupFilterKey = (typeof GROUP_FILTER_ATTRIBUTES)[keyof typeof GROUP_FILTER_ATTRIBUTES];

const USER_COLUMNS: Record<UserFilterKey, FilterColumn> = {
  userName: { column: 'u.login', caseExact: false },
  email: { column: 'u.email', caseExact: false },
  externalId: { column: 'su.external_id', caseExact: true },
  displayName: { column: 'u.name', caseExact: false },
};
const GROUP_COLUMNS: Record<GroupFilterKey, FilterColumn> = {
  displayName: { column: 't.name', caseExact: false },
  externalId: { column: 'sg.external_id', caseExact: true },
};

const likeEscaped = (value: string) => value.replace(/[!%_]/g, (c) => `!${c}`);

/** One checked filter term as a where clause on `q`: values are bound, columns come from `columns`. */
function whereTerm<K extends string>(q: Knex.QueryBuilder, term: FilterTerm<K>, columns: Record<K, FilterColumn>): void {
  if ('terms' in term) {
    const { op, terms } = term;
    q.where((group) => {
      for (const inner of terms) {
        const add = (sub: Knex.QueryBuilder) => whereTerm(sub, inner, columns);
        if (op === 'and') group.andWhere(add);
        else group.orWhere(add);
      }
    });
    return;
  }
  const { column, caseExact } = columns[term.attribute];
  if (!('value' in term)) {
    q.where((sub) => sub.whereNotNull(column).andWhere(column, '<>', ''));
    return;
  }
  const value = caseExact ? term.value : term.value.toLowerCase();
  const target = caseExact ? column : `LOWER(${column})`;
  if (term.op === 'eq') q.whereRaw(`${target} = ?`, [value]);
  else if (term.op === 'co') q.whereRaw(`${target} LIKE ? ESCAPE '!'`, [`%${likeEscaped(value)}%`]);
  else q.whereRaw(`${target} LIKE ? ESCAPE '!'`, [`${likeEscaped(value)}%`]);
}

function usersOf(db: Knex, orgId: string): Knex.QueryBuilder {
  return db('scim_users as su')
    .join('users as u', 'u.id', 'su.user_id')
    .where('su.org_id', orgId)
    .select('u.id', 'u.login', 'u.email', 'u.name', 'u.is_disabled', 'su.external_id', 'u.created_at', 'u.updated_at');
}

export async function findScimUsersPage(
  db: Knex,
  orgId: string,
  filter: FilterTerm<UserFilterKey> | undefined,
  page: PageWindow,
): Promise<{ totalCount: number; rows: ScimUserRow[] }> {
  const matching = () => {
    const query = usersOf(db, orgId);
    if (filter) query.where((q) => whereTerm(q, filter, USER_COLUMNS));
    return query;
  };
  return findPage<ScimUserRow>(matching, ['u.login', 'u.id'], page);
}

/** The SCIM user `userId` of the org; never a user another org or anything but SCIM created. */
export async function findScimUser(db: Knex, orgId: string, userId: string): Promise<ScimUserRow | undefined> {
  return usersOf(db, orgId).where('u.id', userId).first();
}

/** The org's SCIM user holding `externalId`, but `exceptUserId`. */
export async function findScimUserByExternalId(db: Knex, orgId: string, externalId: string, exceptUserId?: string): Promise<{ user_id: string } | undefined> {
  const query = db('scim_users').where({ org_id: orgId, external_id: externalId });
  if (exceptUserId) query.whereNot('user_id', exceptUserId);
  return query.first('user_id');
}

/** The org's SCIM users among `userIds`: the only accounts a group may hold. */
export async function findScimUsersByIds(db: Knex, orgId: string, userIds: string[]): Promise<Array<{ id: string; login: string }>> {
  if (userIds.length === 0) return [];
  return usersOf(db, orgId).whereIn('u.id', userIds).clearSelect().select('u.id', 'u.login');
}

export async function insertScimUserLink(db: Knex, orgId: string, userId: string, externalId: string | null, now: number): Promise<void> {
  await db('scim_users').insert({ org_id: orgId, user_id: userId, external_id: externalId, created_at: now, updated_at: now });
}

export async function updateScimUserLink(db: Knex, orgId: string, userId: string, externalId: string | null, now: number): Promise<void> {
  await db('scim_users').where({ org_id: orgId, user_id: userId }).update({ external_id: externalId, updated_at: now });
}

export async function deleteScimUserLink(db: Knex, orgId: string, userId: string): Promise<void> {
  await db('scim_users').where({ org_id: orgId, user_id: userId }).delete();
}

/** The org whose SCIM provisioned the user, if one did. */
export async function findProvisioningOrg(db: Knex, userId: string): Promise<string | undefined> {
  const row: { org_id: string } | undefined = await db('scim_users').where('user_id', userId).first('org_id');
  return row?.org_id;
}

/** Whether SCIM of any org provisioned the user: such an account is never a server admin. */
export async function isScimProvisioned(db: Knex, userId: string): Promise<boolean> {
  return !!(await db('scim_users').where('user_id', userId).first('user_id'));
}

/** Whether the user belongs to an org other than `orgId`. */
export async function belongsToAnotherOrg(db: Knex, userId: string, orgId: string): Promise<boolean> {
  return !!(await db('org_members').where('user_id', userId).whereNot('org_id', orgId).first('org_id'));
}

function groupsOf(db: Knex, orgId: string): Knex.QueryBuilder {
  return db('scim_groups as sg')
    .join('teams as t', 't.id', 'sg.team_id')
    .where('sg.org_id', orgId)
    .select('t.id', 't.org_id', 't.name', 't.email', 'sg.external_id', 't.created_at', 't.updated_at');
}

export async function findScimGroupsPage(
  db: Knex,
  orgId: string,
  filter: FilterTerm<GroupFilterKey> | undefined,
  page: PageWindow,
): Promise<{ totalCount: number; rows: ScimGroupRow[] }> {
  const matching = () => {
    const query = groupsOf(db, orgId);
    if (filter) query.where((q) => whereTerm(q, filter, GROUP_COLUMNS));
    return query;
  };
  return findPage<ScimGroupRow>(matching, ['t.name', 't.id'], page);
}

export async function findScimGroup(db: Knex, orgId: string, teamId: string): Promise<ScimGroupRow | undefined> {
  return groupsOf(db, orgId).where('t.id', teamId).first();
}

export async function findScimGroupByExternalId(db: Knex, orgId: string, externalId: string, exceptTeamId?: string): Promise<{ team_id: string } | undefined> {
  const query = db('scim_groups').where({ org_id: orgId, external_id: externalId });
  if (exceptTeamId) query.whereNot('team_id', exceptTeamId);
  return query.first('team_id');
}

export async function insertScimGroupLink(db: Knex, orgId: string, teamId: string, externalId: string | null, now: number): Promise<void> {
  await db('scim_groups').insert({ org_id: orgId, team_id: teamId, external_id: externalId, created_at: now, updated_at: now });
}

export async function updateScimGroupLink(db: Knex, orgId: string, teamId: string, externalId: string | null, now: number): Promise<void> {
  await db('scim_groups').where({ org_id: orgId, team_id: teamId }).update({ external_id: externalId, updated_at: now });
}

/** The SCIM users of the org in each of `teamIds`, by login: what a group lists as members (other members stay unlisted). */
export async function findScimMembersOfTeams(db: Knex, orgId: string, teamIds: string[]): Promise<Map<string, Array<{ id: string; login: string }>>> {
  const byTeam = new Map<string, Array<{ id: string; login: string }>>();
  if (teamIds.length === 0) return byTeam;
  const rows: Array<{ team_id: string; id: string; login: string }> = await db('team_members as tm')
    .join('scim_users as su', (join) => join.on('su.user_id', '=', 'tm.user_id').andOn('su.org_id', '=', db.raw('?', [orgId])))
    .join('users as u', 'u.id', 'tm.user_id')
    .whereIn('tm.team_id', teamIds)
    .orderBy([{ column: 'u.login' }, { column: 'u.id' }])
    .select('tm.team_id', 'u.id', 'u.login');
  for (const row of rows) {
    const members = byTeam.get(row.team_id) ?? [];
    members.push({ id: row.id, login: row.login });
    byTeam.set(row.team_id, members);
  }
  return byTeam;
}

/** The SCIM groups of the org each of `userIds` is a member of, by name, in one query: the users' read-only `groups`. */
export async function findScimGroupsOfUsers(db: Knex, orgId: string, userIds: string[]): Promise<Map<string, Array<{ id: string; name: string }>>> {
  const byUser = new Map<string, Array<{ id: string; name: string }>>();
  if (userIds.length === 0) return byUser;
  const rows: Array<{ user_id: string; id: string; name: string }> = await db('scim_groups as sg')
    .join('teams as t', 't.id', 'sg.team_id')
    .join('team_members as tm', 'tm.team_id', 't.id')
    .where('sg.org_id', orgId)
    .whereIn('tm.user_id', userIds)
    .orderBy([{ column: 't.name' }, { column: 't.id' }])
    .select('tm.user_id', 't.id', 't.name');
  for (const row of rows) {
    const groups = byUser.get(row.user_id) ?? [];
    groups.push({ id: row.id, name: row.name });
    byUser.set(row.user_id, groups);
  }
  return byUser;
}

/** Sets or clears the user's email (stored lower-cased); SCIM may leave a user without one. */
export async function setUserEmail(db: Knex, userId: string, email: string | null, now: number): Promise<void> {
  await db('users')
    .where('id', userId)
    .update({ email: email?.toLowerCase() ?? null, updated_at: now });
}
