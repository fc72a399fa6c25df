/**
 * The entries of a `changes` connector: `POST /api/connectors/:uid/changes` records one (needs
 * write on the connector, e.g. granted to a CI service account), `GET` reads them back (needs
 * query). The work is in changes.ts, which the chat tools call too.
 */
import { actorOf } from '../http/actor.ts';
import { uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { changeEntrySchema, changeQuerySchema, findChanges, findChangesConnectorOrFail, recordChange } from './changes.ts';
import { CHANGE_ENTRY_SCHEMA, CHANGE_PAGE_SCHEMA } from './responses.ts';
import { connectorResource } from './target.ts';

export const connectorChangeRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/connectors/:uid/changes',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: changeEntrySchema,
    summary: 'Records a change entry (a deploy, a config or infrastructure change) on a changes connector.',
    responses: { 201: CHANGE_ENTRY_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('connectors:write', connectorResource(params.uid));
      const now = services.clock.now();
      const entry = await services.transact(async (tx) => {
        const connector = await findChangesConnectorOrFail(tx.db, orgId, params.uid);
        return recordChange(tx, actorOf(ctx, principal), connector, body, principal.user.id, now);
      });
      ctx.status = 201;
      ctx.body = entry;
    },
  });

  routes.add({
    method: 'get',
    path: '/api/connectors/:uid/changes',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    query: changeQuerySchema,
    summary: "Lists a changes connector's entries, newest first, a page at a time.",
    responses: { 200: CHANGE_PAGE_SCHEMA },
    async handler({ ctx, params, query, orgId, services, authorize }) {
      await authorize('connectors:query', connectorResource(params.uid));
      const connector = await findChangesConnectorOrFail(services.db, orgId, params.uid);
      ctx.body = await findChanges(services.db, orgId, connector.uid, query);
    },
  });
};
