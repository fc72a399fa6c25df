/**
 * The active org (`/api/org…`): the X-Svc-Org-Id header, then ?orgId, then the caller's default
 * org. Every check is asked in that org of a member; no resource names the org itself, so a
 * server admin reaches an org here only as its member (they administer any org through
 * /api/orgs/<id>).
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { NotFoundError } from '../errors.ts';
import { searchQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { preferencesSchema, readPreferences, writePreferences } from '../preferences/store.ts';
import {
  addMemberBodySchema,
  addMemberByLoginOrEmail,
  changeMemberRole,
  listOrgMembers,
  MEMBER_ADDED_SCHEMA,
  memberRoleBodySchema,
  membershipTarget,
  removeMember,
} from './members.ts';
import { ORG_MEMBERS_PAGE_SCHEMA, ORG_SCHEMA, ORG_USER_LOOKUP_SCHEMA, PREFERENCES_SCHEMA, presentOrg, presentOrgUserLookup } from './presenter.ts';
import { orgTarget, orgUpdateBodySchema, updateOrgDetails } from './routes.ts';
import { findHumanMembersMatching, findOrgById, findOrgDetails } from './store.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

const userIdParams = { type: 'object', properties: { userId: { type: 'string', minLength: 1, maxLength: 40 } }, required: ['userId'] } as const;

/** Grafana scopes the org-user actions by user: `users:*` for the whole list, `users:id:<id>` for one. */
const everyUser = { scope: 'users:*' };
const oneUser = (id: string) => ({ kind: 'users', id });

/** Grafana's lookup answers a handful of names for a picker, not a listing. */
const LOOKUP_DEFAULT_LIMIT = 20;
const LOOKUP_MAX_LIMIT = 100;

export const currentOrgRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/org',
    access: 'authenticated',
    level: 'org',
    summary: 'Reads the active org: name, address, billing email.',
    responses: { 200: ORG_SCHEMA },
    async handler({ ctx, orgId, services, authorize }) {
      await authorize('orgs:read');
      const org = await findOrgDetails(services.db, orgId);
      if (!org) throw new NotFoundError(`org ${orgId} not found`);
      ctx.body = presentOrg(org);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/org',
    access: 'authenticated',
    level: 'org',
    body: orgUpdateBodySchema,
    summary: 'Changes the name, address or billing email of the active org.',
    responses: { 200: ORG_SCHEMA },
    async handler(route) {
      const { ctx, orgId, body, authorize } = route;
      await authorize('orgs:write');
      ctx.body = await updateOrgDetails(route, orgId, body);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/org/users',
    access: 'authenticated',
    level: 'org',
    query: searchQuerySchema,
    summary: 'Lists the people of the active org with their roles.',
    responses: { 200: ORG_MEMBERS_PAGE_SCHEMA },
    async handler({ ctx, query, orgId, services, authorize }) {
      await authorize('org.users:read', everyUser);
      ctx.body = await listOrgMembers(services.db, orgId, query);
    },
  });

  // Grafana's user picker. Before /api/org/users/:userId, which would otherwise take "lookup" for an id.
  routes.add({
    method: 'get',
    path: '/api/org/users/lookup',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      properties: {
        query: { type: 'string', maxLength: 190 },
        limit: { type: 'integer', minimum: 1, maximum: LOOKUP_MAX_LIMIT, default: LOOKUP_DEFAULT_LIMIT },
      },
      additionalProperties: false,
    },
    summary: 'Finds people of the active org by login, email or name, for a user picker.',
    responses: { 200: { type: 'array', items: ORG_USER_LOOKUP_SCHEMA } },
    async handler({ ctx, query, orgId, services, authorize }) {
      await authorize('org.users:read', everyUser);
      const members = await findHumanMembersMatching(services.db, orgId, query.query?.trim(), query.limit ?? LOOKUP_DEFAULT_LIMIT);
      ctx.body = members.map(presentOrgUserLookup);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/org/users',
    access: 'authenticated',
    level: 'org',
    body: addMemberBodySchema,
    summary: 'Adds an existing user to the active org, by login or email, with a role.',
    responses: { 200: MEMBER_ADDED_SCHEMA },
    async handler(route) {
      const { ctx, orgId, body, authorize } = route;
      await authorize('org.users:add', everyUser);
      ctx.body = await addMemberByLoginOrEmail(route, orgId, body);
    },
  });

  routes.add({
    method: 'patch',
    path: '/api/org/users/:userId',
    access: 'authenticated',
    level: 'org',
    params: userIdParams,
    body: memberRoleBodySchema,
    summary: 'Changes the role of a member of the active org (ends their sessions).',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, orgId, params, body, authorize, services } = route;
      await authorize('org.users:write', oneUser(params.userId), { targetUser: await membershipTarget(services.db, params.userId) });
      ctx.body = await changeMemberRole(route, orgId, params.userId, body.role);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/org/users/:userId',
    access: 'authenticated',
    level: 'org',
    params: userIdParams,
    summary: 'Removes a member from the active org (ends their sessions).',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, orgId, params, authorize, services } = route;
      await authorize('org.users:remove', oneUser(params.userId), { targetUser: await membershipTarget(services.db, params.userId) });
      ctx.body = await removeMember(route, orgId, params.userId);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/org/preferences',
    access: 'authenticated',
    level: 'org',
    summary: 'Reads the preferences of the active org: home dashboard, timezone, theme.',
    responses: { 200: PREFERENCES_SCHEMA },
    async handler({ ctx, orgId, services, authorize }) {
      await authorize('orgs.preferences:read');
      ctx.body = await readPreferences(services.db, 'org', orgId);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/org/preferences',
    access: 'authenticated',
    level: 'org',
    body: preferencesSchema,
    summary: 'Replaces the preferences of the active org (an omitted field goes back to its default).',
    responses: { 200: PREFERENCES_SCHEMA },
    async handler({ ctx, orgId, body, principal, services, authorize }) {
      await authorize('orgs.preferences:write');
      const now = services.clock.now();
      ctx.body = await services.transact(async (tx) => {
        const org = await findOrgById(tx.db, orgId);
        if (!org) throw new NotFoundError(`org ${orgId} not found`);
        const saved = await writePreferences(tx.db, 'org', org.id, body, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'org.preferences_updated', orgId: org.id, target: orgTarget(org), metadata: { fields: Object.keys(body).sort() } },
          now,
        );
        return saved;
      });
    },
  });
};
