/** `/api/access-control…` of the walking skeleton: status and seeding. */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { seedGlobalRoles, seedOrgRoles } from './seed.ts';

const STATUS_SCHEMA = {
  type: 'object',
  properties: { enabled: { const: true }, rbacEnabled: { const: true } },
  required: ['enabled', 'rbacEnabled'],
} as const;

const count = { type: 'integer', minimum: 0 } as const;

/** The message, the org, and how many of its roles were created, put back or already right. */
const SEED_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string' }, orgId: { type: 'string' }, created: count, updated: count, unchanged: count },
  required: ['message', 'orgId', 'created', 'updated', 'unchanged'],
} as const;

export const accessControlRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/access-control/status',
    access: 'public',
    summary: 'Whether role-based access control is on (always).',
    responses: { 200: STATUS_SCHEMA },
    async handler({ ctx }) {
      // Role-based access control is how this service authorizes; it cannot be switched off.
      ctx.body = { enabled: true, rbacEnabled: true };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/access-control/seed',
    access: 'authenticated',
    level: 'org',
    summary: 'Puts the basic and fixed roles of the active org, and the global ones, back to their definitions.',
    responses: { 200: SEED_SCHEMA },
    async handler({ ctx, principal, orgId, services, authorize }) {
      // Seeding is a server-admin action, aimed at the active org (of which the admin is a member).
      await authorize('roles:seed', { kind: 'orgs', id: orgId });
      const now = services.clock.now();
      const result = await services.transact(async (tx) => {
        const org = await seedOrgRoles(tx, orgId, now);
        const global = await seedGlobalRoles(tx, now);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'role.seeded', orgId, target: { type: 'org', id: orgId }, metadata: { org, global } }, now);
        return { org, global };
      });
      ctx.body = { message: 'roles seeded', orgId, ...result.org };
    },
  });
};
