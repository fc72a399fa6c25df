/**
 * Role assignments (`/api/access-control/users/<userId>/roles…` and `…/teams/<teamId>/roles…`)
 * and a user's resolved permissions, modelled on Grafana's access-control API. Assigning needs
 * `roles:write` on the role and, by delegation, every permission it grants; unassigning and
 * replacing likewise for each role taken away, in one decision (assignments.ts). A global assignment (every org) is the server's:
 * server admins only. A user's roles here are its assigned roles, not the basic role its org
 * role carries (that one shows in the org's users). Who holds a role is read with `roles:read` on
 * it, the right to read role assignments: its users, teams and service accounts in the active org.
 */
import { NotFoundError } from '../errors.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { findUserById } from '../identity/users.store.ts';
import { assigneeOrFail, assignRole, listAssignedRoles, replaceAssignedRoles, teamAssignee, unassignRole, userAssignee, type Assignee } from './assignments.ts';
import { ASSIGNED_ROLE_PAGE_SCHEMA, PERMISSION_MAP_SCHEMA, presentRoleHolders, ROLE_HOLDERS_SCHEMA } from './presenter.ts';
import { resolveRole, roleRef, subjectOfUser } from './roles.ts';
import { findRoleHoldersInOrg } from './store.ts';
import { isOrgMember } from '../orgs/store.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

const id = { type: 'string', minLength: 1, maxLength: 40 } as const;
const roleUid = { type: 'string', minLength: 1, maxLength: 190 } as const;
const userParams = { type: 'object', properties: { userId: id }, required: ['userId'] } as const;
const teamParams = { type: 'object', properties: { teamId: id }, required: ['teamId'] } as const;
const userRoleParams = { type: 'object', properties: { userId: id, roleUid }, required: ['userId', 'roleUid'] } as const;
const roleParams = { type: 'object', properties: { roleUid }, required: ['roleUid'] } as const;
const teamRoleParams = { type: 'object', properties: { teamId: id, roleUid }, required: ['teamId', 'roleUid'] } as const;
const listQuery = {
  type: 'object',
  properties: { ...paginationQuerySchema, includeHidden: { type: 'boolean', default: false } },
  additionalProperties: false,
} as const;
const globalQuery = { type: 'object', properties: { global: { type: 'boolean', default: false } }, additionalProperties: false } as const;
const roleUidsSchema = { type: 'array', maxItems: 1000, items: roleUid } as const;

/** One page of an assignee's roles, in the list envelope. */
function pageOfRoles(roles: Awaited<ReturnType<typeof listAssignedRoles>>, query: { perpage?: number; page?: number }) {
  const page = pageOf(query);
  return { totalCount: roles.length, roles: roles.slice(page.offset, page.offset + page.limit), page: page.page, perPage: page.perPage };
}

const replaced = (assignee: Assignee, change: { added: string[]; removed: string[] }) => ({
  message: `roles of the ${assignee.target.type} updated`,
  ...change,
});

const ROLES_REPLACED_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string' }, added: { type: 'array', items: roleUid }, removed: { type: 'array', items: roleUid } },
  required: ['message', 'added', 'removed'],
} as const;

export const roleAssignmentRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/access-control/users/:userId/roles',
    access: 'authenticated',
    level: 'org',
    params: userParams,
    query: listQuery,
    summary: 'The roles assigned to a user of the active org (with its global assignments), one page.',
    responses: { 200: ASSIGNED_ROLE_PAGE_SCHEMA },
    async handler({ ctx, params, query, orgId, services, authorize }) {
      await authorize('roles:read');
      const assignee = assigneeOrFail(await userAssignee(services.db, orgId, params.userId, false));
      ctx.body = pageOfRoles(await listAssignedRoles(services.db, assignee, query.includeHidden === true), query);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/access-control/users/:userId/roles',
    access: 'authenticated',
    level: 'org',
    params: userParams,
    body: { type: 'object', properties: { roleUid, global: { type: 'boolean' } }, required: ['roleUid'], additionalProperties: false },
    summary: 'Assigns a role to a user in the active org, or in every org (global).',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, body, params, orgId, services } = route;
      await assignRole(route, await userAssignee(services.db, orgId, params.userId, body.global === true), body.roleUid);
      ctx.body = { message: 'role assigned to the user' };
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/access-control/users/:userId/roles/:roleUid',
    access: 'authenticated',
    level: 'org',
    params: userRoleParams,
    query: globalQuery,
    summary: 'Unassigns a role from a user in the active org, or a global assignment.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, params, query, orgId, services } = route;
      await unassignRole(route, await userAssignee(services.db, orgId, params.userId, query.global === true), params.roleUid);
      ctx.body = { message: 'role unassigned from the user' };
    },
  });

  routes.add({
    method: 'put',
    path: '/api/access-control/users/:userId/roles',
    access: 'authenticated',
    level: 'org',
    params: userParams,
    body: { type: 'object', properties: { roleUids: roleUidsSchema, global: { type: 'boolean' } }, required: ['roleUids'], additionalProperties: false },
    summary: "Makes the listed roles a user's roles in the active org (or its global ones); managed roles stay.",
    responses: { 200: ROLES_REPLACED_SCHEMA },
    async handler(route) {
      const { ctx, body, params, orgId, services } = route;
      const request = await userAssignee(services.db, orgId, params.userId, body.global === true);
      const change = await replaceAssignedRoles(route, request, body.roleUids);
      ctx.body = replaced(assigneeOrFail(request), change);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/access-control/teams/:teamId/roles',
    access: 'authenticated',
    level: 'org',
    params: teamParams,
    query: listQuery,
    summary: 'The roles assigned to a team of the active org, one page.',
    responses: { 200: ASSIGNED_ROLE_PAGE_SCHEMA },
    async handler({ ctx, params, query, orgId, services, authorize }) {
      await authorize('roles:read');
      const assignee = assigneeOrFail(await teamAssignee(services.db, orgId, params.teamId));
      ctx.body = pageOfRoles(await listAssignedRoles(services.db, assignee, query.includeHidden === true), query);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/access-control/teams/:teamId/roles',
    access: 'authenticated',
    level: 'org',
    params: teamParams,
    body: { type: 'object', properties: { roleUid }, required: ['roleUid'], additionalProperties: false },
    summary: 'Assigns a role to a team of the active org.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, body, params, orgId, services } = route;
      await assignRole(route, await teamAssignee(services.db, orgId, params.teamId), body.roleUid);
      ctx.body = { message: 'role assigned to the team' };
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/access-control/teams/:teamId/roles/:roleUid',
    access: 'authenticated',
    level: 'org',
    params: teamRoleParams,
    summary: 'Unassigns a role from a team of the active org.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, params, orgId, services } = route;
      await unassignRole(route, await teamAssignee(services.db, orgId, params.teamId), params.roleUid);
      ctx.body = { message: 'role unassigned from the team' };
    },
  });

  routes.add({
    method: 'put',
    path: '/api/access-control/teams/:teamId/roles',
    access: 'authenticated',
    level: 'org',
    params: teamParams,
    body: { type: 'object', properties: { roleUids: roleUidsSchema }, required: ['roleUids'], additionalProperties: false },
    summary: "Makes the listed roles a team's roles; managed roles stay.",
    responses: { 200: ROLES_REPLACED_SCHEMA },
    async handler(route) {
      const { ctx, body, params, orgId, services } = route;
      const request = await teamAssignee(services.db, orgId, params.teamId);
      const change = await replaceAssignedRoles(route, request, body.roleUids);
      ctx.body = replaced(assigneeOrFail(request), change);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/access-control/roles/:roleUid/assignments',
    access: 'authenticated',
    level: 'org',
    params: roleParams,
    summary:
      'Who holds a role in the active org by assignment: users (with global assignments), teams and service accounts, each sorted by id. A basic role comes with the org role, not by assignment.',
    responses: { 200: ROLE_HOLDERS_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('roles:read', roleRef(params.roleUid));
      const role = await resolveRole(services.db, orgId, params.roleUid);
      ctx.body = presentRoleHolders(role.uid, await findRoleHoldersInOrg(services.db, orgId, role.id));
    },
  });

  routes.add({
    method: 'get',
    path: '/api/access-control/users/:userId/permissions',
    access: 'authenticated',
    level: 'org',
    params: userParams,
    summary: 'What a user of the active org may do: each action with the scopes it holds it on.',
    responses: { 200: PERMISSION_MAP_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize, permissions }) {
      await authorize('users.permissions:read', { kind: 'users', id: params.userId });
      const user = await findUserById(services.db, params.userId);
      if (!user || !(await isOrgMember(services.db, orgId, user.id))) throw new NotFoundError(`user ${params.userId} not found in this org`);
      ctx.body = await permissions(subjectOfUser(user));
    },
  });
};
