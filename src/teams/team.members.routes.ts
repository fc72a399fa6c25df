/**
 * Members of a team (`/api/teams/:id/members…`): list, add, set the permission (0 = Member,
 * 4 = Admin), remove. Membership feeds the policy (a member holds its teams' roles), and the
 * Admin permission is a managed-role grant on the team (team-admins.ts), so every change here
 * tells the engine which member and role it touched.
 */
import type { Knex } from 'knex';
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { listPage, listQuerySchema, pageOf } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';

import { presentTeamMember, TEAM_MEMBER_SCHEMA, TEAM_MEMBERS_PAGE_SCHEMA } from './presenter.ts';
import {
  deleteTeamMember,
  findMembersOfTeamPage,
  findOrgMemberForTeam,
  findTeamMember,
  insertTeamMember,
  setTeamMemberPermission,
  TEAM_ADMIN,
  TEAM_MEMBER,
} from './store.ts';
import { grantTeamAdmin, revokeTeamAdmin, teamAdminPermissions } from './team-admins.ts';
import { findTeamOrFail, teamAuditTarget, teamIdParams, teamResource } from './team-target.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

const memberParams = {
  type: 'object',
  properties: { ...teamIdParams.properties, userId: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['id', 'userId'],
} as const;

async function findMemberOrFail(db: Knex, teamId: string, userId: string, lock = false) {
  const member = await findTeamMember(db, teamId, userId, lock);
  if (!member) throw new NotFoundError(`user ${userId} is not a member of team ${teamId}`);
  return member;
}

export const teamMemberRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/teams/:id/members',
    access: 'authenticated',
    level: 'org',
    params: teamIdParams,
    query: listQuerySchema,
    summary: 'Lists the members of a team with their permission (0 Member, 4 Admin).',
    responses: { 200: TEAM_MEMBERS_PAGE_SCHEMA },
    async handler({ ctx, params, query, orgId, services, authorize }) {
      await authorize('teams:read', teamResource(params.id));
      const team = await findTeamOrFail(services.db, orgId, params.id);
      const page = pageOf(query);
      ctx.body = listPage('teamMembers', page, await findMembersOfTeamPage(services.db, team.id, page), (member) => presentTeamMember(member, orgId));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/teams/:id/members',
    access: 'authenticated',
    level: 'org',
    params: teamIdParams,
    body: {
      type: 'object',
      properties: { userId: { type: 'string', minLength: 1, maxLength: 40 } },
      required: ['userId'],
      additionalProperties: false,
    },
    summary: 'Adds a user of the org to a team, as Member.',
    responses: { 200: TEAM_MEMBER_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('team.permissions:write', teamResource(params.id));
      const now = services.clock.now();
      const member = await services.transact(async (tx) => {
        const team = await findTeamOrFail(tx.db, orgId, params.id, true);
        // The same answer for an unknown user and a user of another org: neither is for this org to learn.
        const user = await findOrgMemberForTeam(tx.db, orgId, body.userId);
        if (!user) throw new BadRequestError(`user ${body.userId} is not a member of this org`);
        if (user.isServiceAccount) throw new BadRequestError('a service account cannot join a team');
        if (await findTeamMember(tx.db, team.id, user.id)) throw new ConflictError(`user ${user.id} is already a member of team ${team.name}`);
        await insertTeamMember(tx, team, user.id, TEAM_MEMBER, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'team.member_added', orgId, target: teamAuditTarget(team), metadata: { userId: user.id, login: user.login, permission: TEAM_MEMBER } },
          now,
        );
        return findMemberOrFail(tx.db, team.id, user.id);
      });
      ctx.body = presentTeamMember(member, orgId);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/teams/:id/members/:userId',
    access: 'authenticated',
    level: 'org',
    params: memberParams,
    body: {
      type: 'object',
      properties: { permission: { type: 'integer', enum: [TEAM_MEMBER, TEAM_ADMIN] } },
      required: ['permission'],
      additionalProperties: false,
    },
    summary: 'Sets the permission of a team member (0 Member, 4 Admin).',
    responses: { 200: TEAM_MEMBER_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      const { permission } = body;
      // Making someone an admin hands out the team-admin rights: the caller must hold them itself.
      await authorize('team.permissions:write', teamResource(params.id), permission === TEAM_ADMIN ? { delegate: teamAdminPermissions(params.id) } : {});
      const now = services.clock.now();
      const member = await services.transact(async (tx) => {
        const team = await findTeamOrFail(tx.db, orgId, params.id, true);
        const current = await findMemberOrFail(tx.db, team.id, params.userId, true);
        if (Number(current.permission) === permission) return current;
        await setTeamMemberPermission(tx.db, team.id, current.user_id, permission);
        if (permission === TEAM_ADMIN) await grantTeamAdmin(tx, orgId, team.id, current.user_id, now);
        else await revokeTeamAdmin(tx, orgId, team.id, current.user_id);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'team.member_updated',
            orgId,
            target: teamAuditTarget(team),
            metadata: { userId: current.user_id, login: current.login, permission, previousPermission: Number(current.permission) },
          },
          now,
        );
        return { ...current, permission };
      });
      ctx.body = presentTeamMember(member, orgId);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/teams/:id/members/:userId',
    access: 'authenticated',
    level: 'org',
    params: memberParams,
    summary: 'Removes a member from a team.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      await authorize('team.permissions:write', teamResource(params.id));
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const team = await findTeamOrFail(tx.db, orgId, params.id, true);
        const member = await findMemberOrFail(tx.db, team.id, params.userId, true);
        await deleteTeamMember(tx, team, member.user_id);
        await revokeTeamAdmin(tx, orgId, team.id, member.user_id);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'team.member_removed', orgId, target: teamAuditTarget(team), metadata: { userId: member.user_id, login: member.login } },
          now,
        );
      });
      ctx.body = { message: 'team member removed' };
    },
  });
};
