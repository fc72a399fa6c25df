/** Preferences of a team (`/api/teams/:id/preferences`): home dashboard, timezone, theme. */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { preferencesSchema, readPreferences, writePreferences } from '../preferences/store.ts';
import { PREFERENCES_SCHEMA } from '../orgs/presenter.ts';
import { findTeamOrFail, teamAuditTarget, teamIdParams, teamResource } from './team-target.ts';

export const teamPreferenceRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/teams/:id/preferences',
    access: 'authenticated',
    level: 'org',
    params: teamIdParams,
    summary: 'Reads the preferences of a team: home dashboard, timezone, theme.',
    responses: { 200: PREFERENCES_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('teams:read', teamResource(params.id));
      const team = await findTeamOrFail(services.db, orgId, params.id);
      ctx.body = await readPreferences(services.db, 'team', team.id);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/teams/:id/preferences',
    access: 'authenticated',
    level: 'org',
    params: teamIdParams,
    body: preferencesSchema,
    summary: 'Replaces the preferences of a team (an omitted field goes back to its default).',
    responses: { 200: PREFERENCES_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('teams:write', teamResource(params.id));
      const now = services.clock.now();
      ctx.body = await services.transact(async (tx) => {
        const team = await findTeamOrFail(tx.db, orgId, params.id, true);
        const saved = await writePreferences(tx.db, 'team', team.id, body, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'team.preferences_updated', orgId, target: teamAuditTarget(team), metadata: { fields: Object.keys(body).sort() } },
          now,
        );
        return saved;
      });
    },
  });
};
