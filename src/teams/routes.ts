/**
 * Teams of the active org (`/api/teams…`), modelled on Grafana's team API: create, search, read,
 * rename, delete. Members and preferences live in the dotted siblings. A team admin (member
 * with permission 4) reaches its own team through its managed role (team-admins.ts).
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { BadRequestError, ConflictError } from '../errors.ts';
import { pageOf, searchQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';

import { presentTeam, TEAM_CREATED_SCHEMA, TEAM_SCHEMA, TEAMS_PAGE_SCHEMA } from './presenter.ts';
import {
  countMembersOfTeams,
  deleteTeam,
  findOrgMemberForTeam,
  findTeamByName,
  findTeamListing,
  insertTeam,
  insertTeamMember,
  TEAM_ADMIN,
  updateTeam,
} from './store.ts';
import { grantTeamAdmin } from './team-admins.ts';
import { findTeamOrFail, teamAuditTarget, teamIdParams, teamResource } from './team-target.ts';
import { teamMemberRoutes } from './team.members.routes.ts';
import { teamPreferenceRoutes } from './team.preferences.routes.ts';
import { nameSchema, optionalEmailSchema } from '../http/schemas.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

/** Names are compared as given, so surrounding blanks are dropped first; a blank name is no name. */
function teamName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new BadRequestError('body.name must not be blank');
  return trimmed;
}

const duplicateName = (name: string) => new ConflictError(`a team named ${name} already exists in this org`);

export const teamRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/teams',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: { name: nameSchema, email: optionalEmailSchema },
      required: ['name'],
      additionalProperties: false,
    },
    summary: 'Creates a team in the active org; the caller becomes its admin.',
    responses: { 201: TEAM_CREATED_SCHEMA },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      await authorize('teams:create');
      const name = teamName(body.name);
      const now = services.clock.now();
      const { team, memberCount } = await services.transact(async (tx) => {
        if (await findTeamByName(tx.db, orgId, name)) throw duplicateName(name);
        const id = await insertTeam(tx, orgId, { name, email: body.email ?? '' }, now);
        const created = { id, org_id: orgId, name, email: body.email ?? '' };
        const actor = actorOf(ctx, principal);
        await recordAudit(tx.db, actor, { action: 'team.created', orgId, target: teamAuditTarget(created) }, now);
        // As in Grafana, the person who creates a team administers it (a token's owner too; a
        // service account stays outside teams).
        const creator = await findOrgMemberForTeam(tx.db, orgId, principal.user.id);
        const joins = !!creator && !creator.isServiceAccount;
        if (joins) {
          await insertTeamMember(tx, created, creator.id, TEAM_ADMIN, now);
          await grantTeamAdmin(tx, orgId, id, creator.id, now);
          await recordAudit(
            tx.db,
            actor,
            {
              action: 'team.member_added',
              orgId,
              target: teamAuditTarget(created),
              metadata: { userId: creator.id, login: creator.login, permission: TEAM_ADMIN },
            },
            now,
          );
        }
        return { team: created, memberCount: joins ? 1 : 0 };
      });
      ctx.status = 201;
      ctx.body = { teamId: team.id, ...presentTeam(team, memberCount) };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/teams/search',
    access: 'authenticated',
    level: 'org',
    query: searchQuerySchema,
    summary: 'Lists the teams of the active org the caller may read, by name.',
    responses: { 200: TEAMS_PAGE_SCHEMA },
    async handler({ ctx, query, orgId, services, authorize, filter }) {
      await authorize('teams:read');
      const page = pageOf(query);
      const search = query.query?.trim();
      const listing = search
        ? await findTeamListing(services.db, orgId, search)
        : await services.teamLists.get(orgId, services.clock.now(), () => findTeamListing(services.db, orgId, undefined));
      // One policy call for every listed team, then the page: totalCount counts what the caller may read.
      const readable = await filter('teams:read', listing!, (listed) => teamResource(listed.team.id));
      ctx.body = {
        totalCount: readable.length,
        teams: readable.slice(page.offset, page.offset + page.limit).map((listed) => presentTeam(listed.team, listed.memberCount)),
        page: page.page,
        perPage: page.perPage,
      };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/teams/:id',
    access: 'authenticated',
    level: 'org',
    params: teamIdParams,
    summary: 'Reads a team with its member count.',
    responses: { 200: TEAM_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('teams:read', teamResource(params.id));
      const team = await findTeamOrFail(services.db, orgId, params.id);
      const counts = await countMembersOfTeams(services.db, [team.id]);
      ctx.body = presentTeam(team, counts.get(team.id) ?? 0);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/teams/:id',
    access: 'authenticated',
    level: 'org',
    params: teamIdParams,
    body: {
      type: 'object',
      properties: { name: nameSchema, email: optionalEmailSchema },
      minProperties: 1,
      additionalProperties: false,
    },
    summary: 'Renames a team or changes its email.',
    responses: { 200: TEAM_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('teams:write', teamResource(params.id));
      const name = body.name === undefined ? undefined : teamName(body.name);
      const now = services.clock.now();
      const team = await services.transact(async (tx) => {
        const current = await findTeamOrFail(tx.db, orgId, params.id, true);
        const changes = {
          ...(name !== undefined && name !== current.name && { name }),
          ...(body.email !== undefined && body.email !== current.email && { email: body.email }),
        };
        const fields = Object.keys(changes).sort();
        if (fields.length === 0) return current;
        if (changes.name && (await findTeamByName(tx.db, orgId, changes.name))) throw duplicateName(changes.name);
        await updateTeam(tx.db, current.id, changes, now);
        const updated = { ...current, ...changes };
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'team.updated', orgId, target: teamAuditTarget(updated), metadata: { fields, ...(changes.name && { previousName: current.name }) } },
          now,
        );
        return updated;
      });
      const counts = await countMembersOfTeams(services.db, [team.id]);
      ctx.body = presentTeam(team, counts.get(team.id) ?? 0);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/teams/:id',
    access: 'authenticated',
    level: 'org',
    params: teamIdParams,
    summary: 'Deletes a team with its memberships.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      await authorize('teams:delete', teamResource(params.id));
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const team = await findTeamOrFail(tx.db, orgId, params.id, true);
        const { memberIds } = await deleteTeam(tx, team);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'team.deleted', orgId, target: teamAuditTarget(team), metadata: { memberIds } }, now);
      });
      ctx.body = { message: 'team deleted' };
    },
  });

  teamMemberRoutes(routes);
  teamPreferenceRoutes(routes);
};
