/** `/api/access-control…` of the walking skeleton: status and seeding. */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { seedGlobalRoles, seedOrgRoles } from './seed.ts';

export const accessControlRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/access-control/status',
    access: 'public',
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
