/**
 * Server administration: statistics and the effective configuration. Both are server actions in
 * the policy (authz.server), so only a server admin is allowed, whatever roles others hold.
 */
import { effectiveSettings } from '../config.ts';
import type { RouteModule } from '../http/route.ts';
import { countLiveSessions } from '../identity/sessions.store.ts';
import { countResources } from './store.ts';

export const adminRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/admin/stats',
    access: 'authenticated',
    level: 'server',
    async handler({ ctx, services, authorize }) {
      await authorize('server.stats:read');
      // Connectors are not counted: the service has no connectors yet.
      const [resources, activeSessions] = await Promise.all([
        countResources(services.db),
        countLiveSessions(services.db, services.clock.now(), services.config.session),
      ]);
      ctx.body = { ...resources, activeSessions };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/admin/settings',
    access: 'authenticated',
    level: 'server',
    async handler({ ctx, services, authorize }) {
      await authorize('settings:read', { scope: 'settings:*' });
      ctx.body = effectiveSettings(services.config);
    },
  });
};
