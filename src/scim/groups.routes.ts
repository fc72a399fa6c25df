/**
 * SCIM Groups (`/scim/v2/Groups…`): the teams the org provisioned through SCIM. Members are the
 * org's SCIM users only; a team's other members (added through /api/teams) are neither listed
 * nor changed. Membership goes through the teams store, so the policy data change is recorded
 * as for the teams API, and each added or removed member is audited as there.
 */
import { recordAudit, type Actor } from '../audit/writer.ts';
import type { Tx } from '../db/transaction.ts';
import { NotFoundError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import {
  deleteTeam,
  deleteTeamMember,
  findTeamByName,
  findTeamInOrg,
  findTeamMember,
  insertTeam,
  insertTeamMember,
  TEAM_MEMBER,
  updateTeam,
  type TeamRow,
} from '../teams/store.ts';
import { revokeTeamAdmin } from '../teams/team-admins.ts';
import { teamAuditTarget } from '../teams/team-target.ts';
import { SCIM_ERROR_SCHEMA, SCIM_PREFIX, invalidValue, uniqueness } from './errors.ts';
import { parseFilter } from './filter.ts';
import { groupFromResource, patchGroup, type GroupFields, type MemberChange } from './groups.ts';
import { listQuerySchema, pageOfList } from './list.ts';
import { listResponse, listResponseSchema, presentScimGroup, SCIM_GROUP_SCHEMA } from './presenter.ts';
import {
  findScimGroup,
  findScimGroupByExternalId,
  findScimGroupsPage,
  findScimMembersOfTeams,
  findScimUsersByIds,
  GROUP_FILTER_ATTRIBUTES,
  insertScimGroupLink,
  updateScimGroupLink,
  type ScimGroupRow,
} from './store.ts';
import { patchOperations } from './users.ts';
import { SCIM_ERRORS, scimBodySchema, scimIdParams } from './users.routes.ts';

async function findScimGroupOrFail(db: Services['db'] | Tx['db'], orgId: string, teamId: string): Promise<ScimGroupRow> {
  const group = await findScimGroup(db, orgId, teamId);
  if (!group) throw new NotFoundError(`group ${teamId} not found`);
  return group;
}

async function presentOne(services: Services, orgId: string, teamId: string) {
  const group = await findScimGroupOrFail(services.db, orgId, teamId);
  const members = await findScimMembersOfTeams(services.db, orgId, [group.id]);
  return presentScimGroup(group, members.get(group.id) ?? []);
}

const nameTaken = () => uniqueness('a team with that displayName already exists in this org');
const externalIdTaken = () => uniqueness('a group of this org already has that externalId');

/** Changes the team's name and externalId to `next`, refusing a name or externalId another team holds. */
async function saveFields(tx: Tx, actor: Actor, orgId: string, team: TeamRow, current: GroupFields, next: GroupFields, now: number): Promise<void> {
  const fields = (Object.keys(next) as Array<keyof GroupFields>).filter((key) => next[key] !== current[key]).sort();
  if (fields.length === 0) return;
  if (next.displayName !== current.displayName) {
    const holder = await findTeamByName(tx.db, orgId, next.displayName);
    if (holder && holder.id !== team.id) throw nameTaken();
  }
  if (next.externalId !== current.externalId) {
    if (next.externalId !== null && (await findScimGroupByExternalId(tx.db, orgId, next.externalId, team.id))) throw externalIdTaken();
    await updateScimGroupLink(tx.db, orgId, team.id, next.externalId, now);
  }
  await updateTeam(tx.db, team.id, next.displayName !== current.displayName ? { name: next.displayName } : {}, now);
  await recordAudit(
    tx.db,
    actor,
    { action: 'team.updated', orgId, target: teamAuditTarget({ ...team, name: next.displayName }), metadata: { fields, by: 'scim' } },
    now,
  );
}

/**
 * Applies member changes to the team: only SCIM users of the org may be named (anything else is
 * a 400 that names no account), and only they are removed by a replace or a removal of all.
 */
async function changeMembers(tx: Tx, actor: Actor, orgId: string, team: TeamRow, changes: MemberChange[], now: number): Promise<void> {
  if (changes.length === 0) return;
  const named = [...new Set(changes.flatMap((change) => (change.kind === 'removeAll' ? [] : change.ids)))];
  const known = new Map((await findScimUsersByIds(tx.db, orgId, named)).map((user) => [user.id, user]));
  const unknown = named.filter((id) => !known.has(id));
  if (unknown.length > 0) throw invalidValue(`members must be users this org provisioned through SCIM; not one: ${unknown.slice(0, 5).join(', ')}`);
  let members = new Map((await findScimMembersOfTeams(tx.db, orgId, [team.id])).get(team.id)?.map((user) => [user.id, user]) ?? []);
  const before = new Map(members);
  for (const change of changes) {
    if (change.kind === 'removeAll') members = new Map();
    else if (change.kind === 'replace') members = new Map(change.ids.map((id) => [id, known.get(id)!]));
    else if (change.kind === 'add') for (const id of change.ids) members.set(id, known.get(id)!);
    else for (const id of change.ids) members.delete(id);
  }
  let changed = false;
  for (const [id, user] of before) {
    if (members.has(id)) continue;
    await deleteTeamMember(tx, team, id);
    await revokeTeamAdmin(tx, orgId, team.id, id);
    await recordAudit(
      tx.db,
      actor,
      { action: 'team.member_removed', orgId, target: teamAuditTarget(team), metadata: { userId: id, login: user.login, by: 'scim' } },
      now,
    );
    changed = true;
  }
  for (const [id, user] of members) {
    if (before.has(id) || (await findTeamMember(tx.db, team.id, id))) continue;
    await insertTeamMember(tx, team, id, TEAM_MEMBER, now);
    await recordAudit(
      tx.db,
      actor,
      { action: 'team.member_added', orgId, target: teamAuditTarget(team), metadata: { userId: id, login: user.login, permission: TEAM_MEMBER, by: 'scim' } },
      now,
    );
    changed = true;
  }
  if (changed) await updateTeam(tx.db, team.id, {}, now);
}

async function lockedTeam(tx: Tx, orgId: string, teamId: string): Promise<{ team: TeamRow; fields: GroupFields }> {
  const group = await findScimGroupOrFail(tx.db, orgId, teamId);
  const team = (await findTeamInOrg(tx.db, orgId, group.id, true))!;
  return { team, fields: { displayName: group.name, externalId: group.external_id } };
}

export const scimGroupRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: `${SCIM_PREFIX}/Groups`,
    access: 'authenticated',
    level: 'org',
    query: listQuerySchema,
    summary: 'SCIM: lists the groups (teams) the org provisioned, filtered and paged.',
    responses: { 200: listResponseSchema(SCIM_GROUP_SCHEMA), ...SCIM_ERRORS },
    async handler({ ctx, query, orgId, services, authorize }) {
      await authorize('scim:read');
      const filter = query.filter === undefined ? undefined : parseFilter(query.filter, GROUP_FILTER_ATTRIBUTES, 'Group');
      const page = pageOfList(query);
      const found = await findScimGroupsPage(services.db, orgId, filter, page);
      const members = await findScimMembersOfTeams(
        services.db,
        orgId,
        found.rows.map((row) => row.id),
      );
      ctx.body = listResponse(
        found.rows.map((row) => presentScimGroup(row, members.get(row.id) ?? [])),
        found.totalCount,
        page.startIndex,
      );
    },
  });

  routes.add({
    method: 'post',
    path: `${SCIM_PREFIX}/Groups`,
    access: 'authenticated',
    level: 'org',
    body: scimBodySchema,
    summary: 'SCIM: creates a group as a team of the org, with SCIM users as members; a name another team holds is 409 uniqueness.',
    responses: { 201: SCIM_GROUP_SCHEMA, 409: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const { fields, members } = groupFromResource(body);
      const now = services.clock.now();
      const teamId = await services.transact(async (tx) => {
        if (await findTeamByName(tx.db, orgId, fields.displayName)) throw nameTaken();
        if (fields.externalId !== null && (await findScimGroupByExternalId(tx.db, orgId, fields.externalId))) throw externalIdTaken();
        const id = await insertTeam(tx, orgId, { name: fields.displayName, email: '' }, now);
        await insertScimGroupLink(tx.db, orgId, id, fields.externalId, now);
        const team = { id, org_id: orgId, name: fields.displayName, email: '' };
        const actor = actorOf(ctx, principal);
        await recordAudit(
          tx.db,
          actor,
          { action: 'team.created', orgId, target: teamAuditTarget(team), metadata: { by: 'scim', externalId: fields.externalId } },
          now,
        );
        await changeMembers(tx, actor, orgId, team, [{ kind: 'add', ids: members }], now);
        return id;
      });
      ctx.status = 201;
      ctx.set('Location', `${SCIM_PREFIX}/Groups/${teamId}`);
      ctx.body = await presentOne(services, orgId, teamId);
    },
  });

  routes.add({
    method: 'get',
    path: `${SCIM_PREFIX}/Groups/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    summary: 'SCIM: reads a group the org provisioned, with its SCIM members.',
    responses: { 200: SCIM_GROUP_SCHEMA, 404: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('scim:read');
      ctx.body = await presentOne(services, orgId, params.id);
    },
  });

  routes.add({
    method: 'put',
    path: `${SCIM_PREFIX}/Groups/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    body: scimBodySchema,
    summary: 'SCIM: replaces a group: its name, externalId and SCIM members.',
    responses: { 200: SCIM_GROUP_SCHEMA, 404: SCIM_ERROR_SCHEMA, 409: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const next = groupFromResource(body);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const { team, fields } = await lockedTeam(tx, orgId, params.id);
        const actor = actorOf(ctx, principal);
        await saveFields(tx, actor, orgId, team, fields, next.fields, now);
        await changeMembers(tx, actor, orgId, { ...team, name: next.fields.displayName }, [{ kind: 'replace', ids: next.members }], now);
      });
      ctx.body = await presentOne(services, orgId, params.id);
    },
  });

  routes.add({
    method: 'patch',
    path: `${SCIM_PREFIX}/Groups/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    body: scimBodySchema,
    summary: 'SCIM: changes a group with add, replace and remove operations, members included (members[value eq "<id>"]).',
    responses: { 200: SCIM_GROUP_SCHEMA, 404: SCIM_ERROR_SCHEMA, 409: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const operations = patchOperations(body);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const { team, fields } = await lockedTeam(tx, orgId, params.id);
        const next = patchGroup(fields, operations);
        const actor = actorOf(ctx, principal);
        await saveFields(tx, actor, orgId, team, fields, next.fields, now);
        await changeMembers(tx, actor, orgId, { ...team, name: next.fields.displayName }, next.changes, now);
      });
      ctx.body = await presentOne(services, orgId, params.id);
    },
  });

  routes.add({
    method: 'delete',
    path: `${SCIM_PREFIX}/Groups/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    summary: 'SCIM: deletes a group: the team with its memberships and grants.',
    responses: { 204: null, 404: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const { team } = await lockedTeam(tx, orgId, params.id);
        const { memberIds } = await deleteTeam(tx, team);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'team.deleted', orgId, target: teamAuditTarget(team), metadata: { memberIds, by: 'scim' } },
          now,
        );
      });
      ctx.status = 204;
    },
  });
};
