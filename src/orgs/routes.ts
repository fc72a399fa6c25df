/**
 * Orgs at server level (`/api/orgs…`), modelled on Grafana's org API. Listing, creating and
 * deleting orgs is a server admin's; reading and changing one org and its members is for the
 * admins of that org, asked in that org (the policy also lets a server admin administer any org
 * this way, member or not).
 */
import { seedOrgRoles } from '../accesscontrol/seed.ts';
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { newId } from '../db/ids.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import type { Infer } from '../http/guard.ts';
import { listPage, pageOf, searchQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { addOrgMember } from '../identity/users.store.ts';
import {
  addMemberBodySchema,
  addMemberByLoginOrEmail,
  changeMemberRole,
  listOrgMembers,
  MEMBER_ADDED_SCHEMA,
  memberRoleBodySchema,
  membershipTarget,
  removeMember,
  type Caller,
} from './members.ts';
import { normalizeAddress, ORG_MEMBERS_PAGE_SCHEMA, ORG_SCHEMA, ORGS_PAGE_SCHEMA, presentOrg, presentOrgSummary } from './presenter.ts';
import {
  DEFAULT_ORG_ID,
  deleteOrgAndDependents,
  findOrgByName,
  findOrgDetails,
  findOrgNameClash,
  findOrgsPage,
  insertOrg,
  lockOrg,
  updateOrg,
  type OrgRow,
} from './store.ts';
import { nonBlankNameSchema, optionalEmailSchema } from '../http/schemas.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

const CREATOR_ROLE = 'Admin';

const addressLineSchema = { type: 'string', maxLength: 190 } as const;

export const orgUpdateBodySchema = {
  type: 'object',
  properties: {
    name: nonBlankNameSchema,
    address: {
      type: 'object',
      properties: {
        address1: addressLineSchema,
        address2: addressLineSchema,
        city: addressLineSchema,
        zipCode: addressLineSchema,
        state: addressLineSchema,
        country: addressLineSchema,
      },
      additionalProperties: false,
    },
    // '' clears it
    billingEmail: optionalEmailSchema,
  },
  minProperties: 1,
  additionalProperties: false,
} as const;

const orgIdParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 40 } }, required: ['id'] } as const;
const memberParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 40 }, userId: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['id', 'userId'],
} as const;

/** The org as the policy names it; asked in the org itself, so its admins hold it. */
const orgResource = (id: string) => ({ kind: 'orgs', id });
export const orgTarget = (org: OrgRow) => ({ type: 'org', id: org.id, name: org.name });

async function presentOrgById(caller: Pick<Caller, 'services'>, orgId: string) {
  const org = await findOrgDetails(caller.services.db, orgId);
  if (!org) throw new NotFoundError(`org ${orgId} not found`);
  return presentOrg(org);
}

/**
 * PUT of name, address and billing email (shared with PUT /api/org). An address given replaces
 * the stored one whole (fields left out become ''); only what really changed is written and audited.
 */
export async function updateOrgDetails(caller: Caller, orgId: string, body: Infer<typeof orgUpdateBodySchema>) {
  const { services } = caller;
  const now = services.clock.now();
  await services.transact(async (tx) => {
    const row = await findOrgDetails(tx.db, orgId);
    if (!row) throw new NotFoundError(`org ${orgId} not found`);
    const current = presentOrg(row);
    const name = body.name?.trim();
    const address = body.address ? normalizeAddress(body.address) : undefined;
    const billingEmail = body.billingEmail?.trim();
    const changes = {
      ...(name !== undefined && name !== current.name && { name }),
      ...(address && JSON.stringify(address) !== JSON.stringify(current.address) && { address: JSON.stringify(address) }),
      ...(billingEmail !== undefined && billingEmail !== current.billingEmail && { billingEmail }),
    };
    const fields = Object.keys(changes).sort();
    if (fields.length === 0) return;
    if (changes.name && (await findOrgNameClash(tx.db, changes.name, row.id))) throw new ConflictError(`an org named ${changes.name} already exists`);
    await updateOrg(tx.db, row.id, changes, now);
    await recordAudit(
      tx.db,
      actorOf(caller.ctx, caller.principal),
      {
        action: 'org.updated',
        orgId: row.id,
        target: orgTarget({ id: row.id, name: changes.name ?? row.name }),
        metadata: { fields, ...(changes.name && { previousName: row.name }) },
      },
      now,
    );
  });
  return presentOrgById(caller, orgId);
}

export const orgRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/orgs',
    access: 'authenticated',
    level: 'server',
    query: searchQuerySchema,
    summary: 'Lists the orgs of the server, by name (server admin).',
    responses: { 200: ORGS_PAGE_SCHEMA },
    async handler({ ctx, query, services, authorize }) {
      await authorize('orgs:read');
      const page = pageOf(query);
      ctx.body = listPage('orgs', page, await findOrgsPage(services.db, query.query?.trim(), page), presentOrgSummary);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/orgs',
    access: 'authenticated',
    level: 'server',
    body: { type: 'object', properties: { name: nonBlankNameSchema }, required: ['name'], additionalProperties: false },
    summary: 'Creates an org; the caller becomes its Admin.',
    responses: { 201: ORG_SCHEMA },
    async handler(route) {
      const { ctx, body, principal, services, authorize } = route;
      await authorize('orgs:create');
      const name = body.name.trim();
      const now = services.clock.now();
      const orgId = await services.transact(async (tx) => {
        if (await findOrgNameClash(tx.db, name)) throw new ConflictError(`an org named ${name} already exists`);
        const id = newId('org');
        await insertOrg(tx.db, { id, name }, now);
        const seeded = await seedOrgRoles(tx, id, now);
        // The creator administers the new org; their default org stays where it was.
        await addOrgMember(tx, id, principal.user.id, CREATOR_ROLE, now);
        const actor = actorOf(ctx, principal);
        await recordAudit(tx.db, actor, { action: 'org.created', orgId: id, target: orgTarget({ id, name }), metadata: { seededRoles: seeded.created } }, now);
        await recordAudit(
          tx.db,
          actor,
          {
            action: 'org.member_added',
            orgId: id,
            target: { type: 'user', id: principal.user.id, name: principal.user.login },
            metadata: { org: name, role: CREATOR_ROLE, as: 'creator' },
          },
          now,
        );
        return id;
      });
      ctx.status = 201;
      ctx.body = await presentOrgById(route, orgId);
    },
  });

  // Before /api/orgs/:id/users, so that an org named "users" is found by name.
  routes.add({
    method: 'get',
    path: '/api/orgs/name/:name',
    access: 'authenticated',
    level: 'server',
    params: { type: 'object', properties: { name: { type: 'string', minLength: 1, maxLength: 190 } }, required: ['name'] },
    summary: 'Reads an org found by its name.',
    responses: { 200: ORG_SCHEMA },
    async handler(route) {
      const { ctx, params, services, authorize } = route;
      // The name must be resolved before the policy can be asked in the org; an unknown name is
      // asked at server level, so only a server admin learns that it does not exist.
      const org = await findOrgByName(services.db, params.name);
      if (!org) {
        await authorize('orgs:read');
        throw new NotFoundError(`no org named ${params.name}`);
      }
      await authorize('orgs:read', orgResource(org.id), { orgId: org.id });
      ctx.body = await presentOrgById(route, org.id);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/orgs/:id',
    access: 'authenticated',
    level: 'server',
    params: orgIdParams,
    summary: 'Reads an org: name, address, billing email.',
    responses: { 200: ORG_SCHEMA },
    async handler(route) {
      const { ctx, params, authorize } = route;
      await authorize('orgs:read', orgResource(params.id), { orgId: params.id });
      ctx.body = await presentOrgById(route, params.id);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/orgs/:id',
    access: 'authenticated',
    level: 'server',
    params: orgIdParams,
    body: orgUpdateBodySchema,
    summary: 'Changes the name, address or billing email of an org.',
    responses: { 200: ORG_SCHEMA },
    async handler(route) {
      const { ctx, params, body, authorize } = route;
      await authorize('orgs:write', orgResource(params.id), { orgId: params.id });
      ctx.body = await updateOrgDetails(route, params.id, body);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/orgs/:id',
    access: 'authenticated',
    level: 'server',
    params: orgIdParams,
    summary: 'Deletes an org with its teams, service accounts and resources.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('orgs:delete', orgResource(params.id));
      if (params.id === DEFAULT_ORG_ID) throw new BadRequestError(`the default org ${DEFAULT_ORG_ID} cannot be deleted`);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const org = await lockOrg(tx.db, params.id);
        if (!org) throw new NotFoundError(`org ${params.id} not found`);
        const deleted = await deleteOrgAndDependents(tx, org.id);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'org.deleted',
            orgId: org.id,
            target: orgTarget(org),
            metadata: { serviceAccountsDeleted: deleted.serviceAccountIds.length, teamsDeleted: deleted.teams },
          },
          now,
        );
      });
      ctx.body = { message: 'org deleted' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/orgs/:id/users',
    access: 'authenticated',
    level: 'server',
    params: orgIdParams,
    query: searchQuerySchema,
    summary: 'Lists the people of an org with their roles.',
    responses: { 200: ORG_MEMBERS_PAGE_SCHEMA },
    async handler({ ctx, params, query, services, authorize }) {
      await authorize('org.users:read', orgResource(params.id), { orgId: params.id });
      ctx.body = await listOrgMembers(services.db, params.id, query);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/orgs/:id/users',
    access: 'authenticated',
    level: 'server',
    params: orgIdParams,
    body: addMemberBodySchema,
    summary: 'Adds an existing user to an org, by login or email, with a role.',
    responses: { 200: MEMBER_ADDED_SCHEMA },
    async handler(route) {
      const { ctx, params, body, authorize } = route;
      await authorize('org.users:add', orgResource(params.id), { orgId: params.id });
      ctx.body = await addMemberByLoginOrEmail(route, params.id, body);
    },
  });

  routes.add({
    method: 'patch',
    path: '/api/orgs/:id/users/:userId',
    access: 'authenticated',
    level: 'server',
    params: memberParams,
    body: memberRoleBodySchema,
    summary: 'Changes the org role of a member (ends their sessions).',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, params, body, authorize, services } = route;
      await authorize('org.users:write', orgResource(params.id), { orgId: params.id, targetUser: await membershipTarget(services.db, params.userId) });
      ctx.body = await changeMemberRole(route, params.id, params.userId, body.role);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/orgs/:id/users/:userId',
    access: 'authenticated',
    level: 'server',
    params: memberParams,
    summary: 'Removes a member from an org (ends their sessions).',
    responses: { 200: MESSAGE_SCHEMA },
    async handler(route) {
      const { ctx, params, authorize, services } = route;
      await authorize('org.users:remove', orgResource(params.id), { orgId: params.id, targetUser: await membershipTarget(services.db, params.userId) });
      ctx.body = await removeMember(route, params.id, params.userId);
    },
  });
};
