/** Quota endpoints: the current user's quotas, and a server admin setting a user's. */
import { actorOf, recordAudit } from '../audit/writer.ts';
import { NotFoundError } from '../http/errors.ts';
import type { RouteModule } from '../http/route.ts';
import { findUserById } from '../identity/users.store.ts';
import { UNLIMITED, writeQuota } from './store.ts';
import { USER_QUOTA_TARGETS, userQuotas } from './user-quotas.ts';

export const quotaRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/user/quotas',
    access: 'authenticated',
    level: 'server',
    async handler({ ctx, principal, services, authorize }) {
      await authorize('users.quotas:read', { kind: 'users', id: principal.user.id });
      ctx.body = await userQuotas(services.db, principal.user.id, services.clock.now());
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/quotas',
    access: 'authenticated',
    level: 'server',
    params: { type: 'object', properties: { userId: { type: 'string', maxLength: 40 } }, required: ['userId'] },
    body: {
      type: 'object',
      properties: {
        target: { type: 'string', enum: [...USER_QUOTA_TARGETS] },
        limit: { type: 'integer', minimum: UNLIMITED },
      },
      required: ['target', 'limit'],
      additionalProperties: false,
    },
    async handler({ ctx, params, body, principal, services, authorize }) {
      await authorize('users.quotas:write', { kind: 'global.users', id: params.userId });
      const user = await findUserById(services.db, params.userId);
      if (!user) throw new NotFoundError('user not found');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        await writeQuota(tx.db, 'user', user.id, body.target, body.limit, now);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'quota.updated', target: { type: 'user', id: user.id, name: user.login }, metadata: { target: body.target, limit: body.limit } }, now);
      });
      ctx.body = await userQuotas(services.db, user.id, now);
    },
  });
};
