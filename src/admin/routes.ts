/**
 * Server administration: statistics and the effective configuration. Both are server actions in
 * the policy (authz.server), so only a server admin is allowed, whatever roles others hold.
 */
import { effectiveSettings } from '../config.ts';
import type { RouteModule } from '../http/route.ts';
import { countLiveSessions } from '../identity/sessions.store.ts';
import { countResources } from './store.ts';

const count = { type: 'integer', minimum: 0 } as const;

const STATS_SCHEMA = {
  type: 'object',
  properties: {
    users: count,
    serviceAccounts: count,
    orgs: count,
    teams: count,
    folders: count,
    dashboards: count,
    alertRules: count,
    connectors: count,
    activeSessions: count,
  },
  required: ['users', 'serviceAccounts', 'orgs', 'teams', 'folders', 'dashboards', 'alertRules', 'connectors', 'activeSessions'],
} as const;

/** Every variable by name with its value: a map, since the variables grow with the service. */
const SETTINGS_SCHEMA = {
  type: 'object',
  propertyNames: { pattern: '^[A-Z][A-Z0-9_]*$' },
  additionalProperties: { type: ['string', 'number', 'boolean', 'array', 'null'], items: { type: 'string' } },
} as const;

export const adminRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/admin/stats',
    access: 'authenticated',
    level: 'server',
    summary: 'Counts users, service accounts, orgs, teams, folders, dashboards, alert rules, connectors and active sessions (server admin).',
    responses: { 200: STATS_SCHEMA },
    async handler({ ctx, services, authorize }) {
      await authorize('server.stats:read');
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
    summary: 'The effective configuration by variable name, secrets redacted (server admin).',
    responses: { 200: SETTINGS_SCHEMA },
    async handler({ ctx, services, authorize }) {
      await authorize('settings:read', { scope: 'settings:*' });
      ctx.body = effectiveSettings(services.config);
    },
  });
};
