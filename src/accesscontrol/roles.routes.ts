/**
 * Roles (`/api/access-control/roles…`), modelled on Grafana's access-control API: list and read
 * the roles an org sees (its own and the global ones), and create, change and delete custom
 * roles. Changing a role needs `roles:write` on it and, by delegation, every permission it would
 * grant; a global role is the server's (server admins only). Versions lock optimistically.
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { BadRequestError, ConflictError } from '../errors.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { versionSchema } from '../http/schemas.ts';
import { lockSetting } from '../settings/store.ts';
import { presentRole, ROLE_PAGE_SCHEMA, ROLE_SCHEMA } from './presenter.ts';
import {
  assertCustomRole,
  assertCustomRoleName,
  assertValidPermissions,
  authorizeRoleChange,
  findRole,
  permissionsOf,
  resolveRole,
  roleNotFound,
  ROLE_CREATION_LOCK,
  roleRef,
  roleTarget,
} from './roles.ts';
import { changeRoleAtVersion, createRole, deleteRole, lockRole } from './policy-writer.ts';
import { findPermissionsByRoleIds, findRoleById, findRolesPageInOrg, isRoleUidTaken } from './store.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

const text = (maxLength: number, minLength = 0) => ({ type: 'string', minLength, maxLength }) as const;

const permissionsSchema = {
  type: 'array',
  maxItems: 1000,
  items: {
    type: 'object',
    // an action-only permission (Grafana's) covers the action on every scope: stored as `*`
    properties: { action: text(190, 1), scope: { ...text(190, 1), default: '*' } },
    required: ['action'],
    additionalProperties: false,
  },
} as const;

export const roleUidParams = {
  type: 'object',
  properties: { roleUid: text(190, 1) },
  required: ['roleUid'],
} as const;

export const roleRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/access-control/roles',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      properties: { ...paginationQuerySchema, includeHidden: { type: 'boolean', default: false } },
      additionalProperties: false,
    },
    summary: 'The roles the active org sees (its own and the global ones), one page.',
    responses: { 200: ROLE_PAGE_SCHEMA },
    async handler({ ctx, query, orgId, services, authorize }) {
      await authorize('roles:read');
      const page = pageOf(query);
      const { totalCount, rows } = await findRolesPageInOrg(services.db, orgId, query.includeHidden === true, page);
      const permissions = await findPermissionsByRoleIds(
        services.db,
        rows.map((row) => row.id),
      );
      ctx.body = { totalCount, roles: rows.map((row) => presentRole(row, permissions.get(row.id) ?? [])), page: page.page, perPage: page.perPage };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/access-control/roles/:roleUid',
    access: 'authenticated',
    level: 'org',
    params: roleUidParams,
    summary: 'A role the active org sees, with its permissions.',
    responses: { 200: ROLE_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('roles:read', roleRef(params.roleUid));
      const role = await resolveRole(services.db, orgId, params.roleUid);
      ctx.body = presentRole(role, await permissionsOf(services.db, role));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/access-control/roles',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: {
        uid: text(190, 1),
        name: text(190, 1),
        displayName: text(190, 1),
        description: text(1000),
        groupName: text(190),
        permissions: permissionsSchema,
        global: { type: 'boolean' },
      },
      required: ['uid', 'name', 'displayName', 'permissions'],
      additionalProperties: false,
    },
    summary: 'Creates a custom role in the active org, or a global one (server admins).',
    responses: { 201: ROLE_SCHEMA },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      const global = body.global === true;
      // one decision on the role and all it would grant; its shape is checked once it is allowed
      await authorizeRoleChange(authorize, 'roles:write', body.uid, body.permissions, global);
      assertCustomRoleName('uid', body.uid);
      assertCustomRoleName('name', body.name);
      assertValidPermissions(body.permissions);
      const scopeOrg = global ? null : orgId;
      const now = services.clock.now();
      const definition = {
        uid: body.uid,
        name: body.name,
        displayName: body.displayName,
        description: body.description ?? '',
        groupName: body.groupName ?? '',
        permissions: body.permissions,
      };
      const roleId = await services.transact(async (tx) => {
        // Unique indexes do not compare null org ids, and an org role may not reuse a global uid:
        // creations take one lock so the check below holds across connections and instances.
        await lockSetting(tx.db, ROLE_CREATION_LOCK);
        if (await isRoleUidTaken(tx.db, scopeOrg, body.uid)) throw new ConflictError(`a role with uid ${body.uid} already exists`);
        const id = await createRole(tx, scopeOrg, definition, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'role.created', orgId: scopeOrg, target: roleTarget(body), metadata: { global, permissions: body.permissions.length } },
          now,
        );
        return id;
      });
      const role = (await findRoleById(services.db, roleId))!;
      ctx.status = 201;
      ctx.body = presentRole(role, await permissionsOf(services.db, role));
    },
  });

  routes.add({
    method: 'put',
    path: '/api/access-control/roles/:roleUid',
    access: 'authenticated',
    level: 'org',
    params: roleUidParams,
    body: {
      type: 'object',
      properties: {
        version: versionSchema(1),
        uid: text(190, 1),
        name: text(190, 1),
        displayName: text(190, 1),
        description: text(1000),
        groupName: text(190),
        permissions: permissionsSchema,
        global: { type: 'boolean' },
      },
      required: ['version'],
      additionalProperties: false,
    },
    summary: 'Changes a custom role at the version last read.',
    responses: { 200: ROLE_SCHEMA },
    async handler({ ctx, body, params, principal, orgId, services, authorize }) {
      // One decision, asked before the caller learns whether the role exists (an unknown uid is
      // no probe): roles:write on it and, by delegation, every permission it would grant; a
      // global role's change is decided at the server.
      const role = await findRole(services.db, orgId, params.roleUid);
      const granted = role ? (body.permissions ?? (await permissionsOf(services.db, role))) : [];
      await authorizeRoleChange(authorize, 'roles:write', params.roleUid, granted, role?.org_id === null);
      if (!role) throw roleNotFound(params.roleUid);
      const global = role.org_id === null;
      assertCustomRole(role, 'changed');
      if (body.uid !== undefined && body.uid !== role.uid) throw new BadRequestError('a role keeps its uid: create a new role instead');
      if (body.global !== undefined && body.global !== global)
        throw new BadRequestError(`role ${role.uid} is ${global ? 'global' : 'of this org'} and stays so`);
      const fields = {
        name: body.name ?? role.name,
        displayName: body.displayName ?? role.display_name,
        description: body.description ?? role.description,
        groupName: body.groupName ?? role.group_name,
      };
      assertCustomRoleName('name', fields.name);
      if (body.permissions) assertValidPermissions(body.permissions);

      const now = services.clock.now();
      await services.transact(async (tx) => {
        const change = await changeRoleAtVersion(tx, role, body.version, fields, body.permissions, now);
        if (!change) {
          throw new ConflictError(`role ${role.uid} was changed since version ${body.version}: read it again and retry with its current version`);
        }
        const { permissionsChanged } = change;
        const changed = [
          ...(fields.name !== role.name ? ['name'] : []),
          ...(fields.displayName !== role.display_name ? ['displayName'] : []),
          ...(fields.description !== role.description ? ['description'] : []),
          ...(fields.groupName !== role.group_name ? ['groupName'] : []),
          ...(permissionsChanged ? ['permissions'] : []),
        ];
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'role.updated',
            orgId: role.org_id,
            target: roleTarget({ uid: role.uid, name: fields.name }),
            metadata: { global, version: body.version + 1, fields: changed },
          },
          now,
        );
      });
      const updated = await resolveRole(services.db, orgId, role.uid);
      ctx.body = presentRole(updated, await permissionsOf(services.db, updated));
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/access-control/roles/:roleUid',
    access: 'authenticated',
    level: 'org',
    params: roleUidParams,
    summary: 'Deletes a custom role and its assignments.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      // One decision, asked before the caller learns whether the role exists: deleting takes the
      // role's permissions from its holders, the same delegation as a change.
      const role = await findRole(services.db, orgId, params.roleUid);
      await authorizeRoleChange(authorize, 'roles:delete', params.roleUid, role ? await permissionsOf(services.db, role) : [], role?.org_id === null);
      if (!role) throw roleNotFound(params.roleUid);
      const global = role.org_id === null;
      assertCustomRole(role, 'deleted');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        if (!(await lockRole(tx, role.id, 'update'))) throw roleNotFound(params.roleUid);
        const assignees = await deleteRole(tx, role);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'role.deleted',
            orgId: role.org_id,
            target: roleTarget(role),
            metadata: { global, assignments: assignees.users.length + assignees.teams.length },
          },
          now,
        );
      });
      ctx.body = { message: 'role deleted' };
    },
  });
};
