/** Quota endpoints: an org's quotas, the current user's, and a server admin setting either. */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { NotFoundError } from '../errors.ts';
import type { RouteModule } from '../http/route.ts';
import { ownRecord } from '../http/subject.ts';
import { findTargetUser, globalUser, userIdParams } from '../identity/admin-users.target.ts';
import { userTarget } from '../identity/session-revocation.ts';
import { findOrgById } from '../orgs/store.ts';
import { ORG_QUOTA_SCHEMA, presentOrgQuotas, QUOTA_TARGETS } from './org-quotas.ts';
import { MAX_QUOTA_LIMIT, UNLIMITED, writeQuota } from './store.ts';
import { USER_QUOTA_TARGETS, USER_QUOTAS_SCHEMA, userQuotas } from './user-quotas.ts';

/** A limit the column holds (a signed 32-bit integer): -1 is unlimited, anything above the range is 400, not a database error. */
const quotaLimitSchema = { type: 'integer', minimum: UNLIMITED, maximum: MAX_QUOTA_LIMIT } as const;

const orgParams = { type: 'object', properties: { orgId: { type: 'string', minLength: 1, maxLength: 40 } }, required: ['orgId'] } as const;

export const quotaRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/orgs/:orgId/quotas',
    access: 'authenticated',
    level: 'server',
    params: orgParams,
    summary: 'Lists the quotas of an org with what each has used.',
    responses: { 200: { type: 'array', items: ORG_QUOTA_SCHEMA } },
    async handler({ ctx, params, services, authorize }) {
      // Asked of the org itself: its admins read its quotas (server admins administer every org).
      await authorize('orgs.quotas:read', { kind: 'orgs', id: params.orgId }, { orgId: params.orgId });
      if (!(await findOrgById(services.db, params.orgId))) throw new NotFoundError(`org ${params.orgId} not found`);
      ctx.body = await presentOrgQuotas(services.db, services.config, params.orgId, services.clock.now());
    },
  });

  routes.add({
    method: 'put',
    path: '/api/orgs/:orgId/quotas/:target',
    access: 'authenticated',
    level: 'server',
    params: {
      type: 'object',
      properties: { orgId: { type: 'string', minLength: 1, maxLength: 40 }, target: { type: 'string', enum: [...QUOTA_TARGETS] } },
      required: ['orgId', 'target'],
    },
    body: { type: 'object', properties: { limit: quotaLimitSchema }, required: ['limit'], additionalProperties: false },
    summary: 'Sets the limit of one quota of an org (server admin).',
    responses: { 200: ORG_QUOTA_SCHEMA },
    async handler({ ctx, params, body, principal, services, authorize }) {
      // Raising its own quota is not an org admin's call: orgs.quotas:write is a server-admin action.
      await authorize('orgs.quotas:write', { kind: 'orgs', id: params.orgId }, { orgId: params.orgId });
      if (!(await findOrgById(services.db, params.orgId))) throw new NotFoundError(`org ${params.orgId} not found`);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        await writeQuota(tx.db, 'org', params.orgId, params.target, body.limit, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'quota.updated', orgId: params.orgId, target: { type: 'org', id: params.orgId }, metadata: { target: params.target, limit: body.limit } },
          now,
        );
      });
      const quotas = await presentOrgQuotas(services.db, services.config, params.orgId, now);
      ctx.body = quotas.find((quota) => quota.target === params.target);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/user/quotas',
    access: 'authenticated',
    level: 'server',
    summary: 'Lists the quotas of the caller with what each has used.',
    responses: { 200: USER_QUOTAS_SCHEMA },
    async handler({ ctx, principal, services, authorize }) {
      await authorize('users.quotas:read', ownRecord(principal));
      ctx.body = await userQuotas(services.db, principal.user.id, services.clock.now());
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/quotas',
    access: 'authenticated',
    level: 'server',
    params: userIdParams,
    body: {
      type: 'object',
      properties: {
        target: { type: 'string', enum: [...USER_QUOTA_TARGETS] },
        limit: quotaLimitSchema,
      },
      required: ['target', 'limit'],
      additionalProperties: false,
    },
    summary: 'Sets the limit of one quota of a user (server admin).',
    responses: { 200: USER_QUOTAS_SCHEMA },
    async handler({ ctx, params, body, principal, services, authorize }) {
      await authorize('users.quotas:write', globalUser(params.userId));
      const user = await findTargetUser(services.db, params.userId);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        await writeQuota(tx.db, 'user', user.id, body.target, body.limit, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'quota.updated', target: userTarget(user), metadata: { target: body.target, limit: body.limit } },
          now,
        );
      });
      ctx.body = await userQuotas(services.db, user.id, now);
    },
  });
};
