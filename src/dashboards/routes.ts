/**
 * Dashboards of the active org, modelled on Grafana's dashboard API: save (create or overwrite
 * by uid, optimistic locking on `version`), read with the caller's rights, delete. A dashboard
 * inherits its folder's grants; moving one needs write on it and create in the destination.
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { newUid } from '../db/ids.ts';
import { findDestinationFolder, folderResource, folderUidOf } from '../folders/target.ts';
import { findFolder, lockTitlesIn } from '../folders/store.ts';
import { BadRequestError, PreconditionFailedError } from '../errors.ts';
import { resourceUidSchema, uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { WIDEST_NUMBER_BOUND } from '../http/guard.ts';
import { versionSchema } from '../http/schemas.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import { DASHBOARD_GRANTS } from '../permissions/levels.ts';
import { grantCreatorAdmin } from '../permissions/resource-grants.ts';
import { DASHBOARD_SAVED_SCHEMA, DASHBOARD_SCHEMA, dashboardUrl, presentDashboard, slugOf } from './presenter.ts';
import { dashboardSearchRoutes } from './search.routes.ts';
import { deleteDashboard, findDashboard, findDashboardByTitle, insertDashboard, updateDashboard } from './store.ts';
import { dashboardAuditTarget, dashboardResource, findDashboardOrFail } from './target.ts';

function dashboardTitle(title: string): string {
  const trimmed = title.trim();
  if (!trimmed) throw new BadRequestError('body.dashboard.title must not be blank');
  return trimmed;
}

const DASHBOARD_DELETED_SCHEMA = {
  type: 'object',
  properties: { uid: { type: 'string' }, title: { type: 'string' }, message: { type: 'string' } },
  required: ['uid', 'title', 'message'],
} as const;

const changedMeanwhile = () => new PreconditionFailedError('The dashboard has been changed by someone else', 'version-mismatch');

export const dashboardRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/dashboards/db',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: {
        dashboard: {
          type: 'object',
          properties: {
            uid: resourceUidSchema,
            title: { type: 'string', minLength: 1, maxLength: 190 },
            version: versionSchema(0),
            // Grafana's numeric id, ignored: uid names a dashboard
            id: { type: ['integer', 'null'], minimum: 0, maximum: WIDEST_NUMBER_BOUND },
          },
          required: ['title'],
        },
        folderUid: { type: 'string', maxLength: 40 },
        overwrite: { type: 'boolean', default: false },
        message: { type: 'string', maxLength: 500 },
      },
      required: ['dashboard'],
      additionalProperties: false,
    },
    summary: 'Creates or overwrites a dashboard by uid (optimistic locking on version), in folderUid or where it is.',
    responses: { 200: DASHBOARD_SAVED_SCHEMA },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      // id and version are Grafana's bookkeeping, uid and title live in columns: the rest is the model.
      const { uid: givenUid, title: givenTitle, version: givenVersion, id: _grafanaId, ...model } = body.dashboard;
      const title = dashboardTitle(givenTitle);
      const existing = givenUid ? await findDashboard(services.db, orgId, givenUid) : undefined;
      // Without folderUid a dashboard stays where it is; a new one goes to the root.
      const destination = body.folderUid === undefined ? (existing?.folder_uid ?? null) : folderUidOf(body.folderUid);
      if (existing) {
        // A move also creates the dashboard in its new folder: the same decision asks dashboards:create there.
        const moving = destination !== existing.folder_uid;
        await authorize('dashboards:write', dashboardResource(existing.uid), moving ? { destination: folderResource(destination) } : {});
      } else {
        await authorize('dashboards:create', folderResource(destination));
      }
      const now = services.clock.now();
      const saved = await services.transact(async (tx) => {
        if (!existing) await enforceOrgQuota(tx, services.config, orgId, 'dashboards', now);
        const current = givenUid ? await findDashboard(tx.db, orgId, givenUid, true) : undefined;
        // Created or deleted since the check above: the caller was authorized for the other case.
        if (!!current !== !!existing) throw changedMeanwhile();
        if (current && !body.overwrite && givenVersion !== current.version) throw changedMeanwhile();
        await lockTitlesIn(tx.db, orgId, destination);
        const folder = await findDestinationFolder(tx.db, orgId, destination, 'body.folderUid');
        const namesake = await findDashboardByTitle(tx.db, orgId, folder?.uid ?? null, title);
        if (namesake && namesake.uid !== current?.uid)
          throw new PreconditionFailedError('A dashboard with the same name in the folder already exists', 'name-exists');
        const content = { title, folderUid: folder?.uid ?? null, model };
        const uid = current?.uid ?? givenUid ?? newUid();
        if (current) await updateDashboard(tx, current, content, principal.user.id, now);
        else {
          await insertDashboard(tx, orgId, uid, content, principal.user.id, now);
          await grantCreatorAdmin(tx, orgId, DASHBOARD_GRANTS, uid, principal.user.id, now);
        }
        const metadata = {
          folderUid: content.folderUid,
          version: (current?.version ?? 0) + 1,
          ...(current && current.folder_uid !== content.folderUid && { previousFolderUid: current.folder_uid }),
          ...(body.message && { message: body.message }),
        };
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: current ? 'dashboard.updated' : 'dashboard.created', orgId, target: dashboardAuditTarget({ uid, title }), metadata },
          now,
        );
        return { uid, title, version: metadata.version, folderUid: content.folderUid };
      });
      ctx.body = {
        uid: saved.uid,
        url: dashboardUrl(saved),
        slug: slugOf(saved.title),
        status: 'success',
        version: saved.version,
        folderUid: saved.folderUid ?? '',
      };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/dashboards/uid/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Reads a dashboard: its model, and meta with what the caller may do with it.',
    responses: { 200: DASHBOARD_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize, filter }) {
      await authorize('dashboards:read', dashboardResource(params.uid));
      const dashboard = await findDashboardOrFail(services.db, orgId, params.uid);
      // What the caller may do with it besides reading, for the client's buttons.
      const [canEdit, canAdmin, canDelete] = await Promise.all(
        (['dashboards:write', 'dashboards.permissions:write', 'dashboards:delete'] as const).map(
          async (action) => (await filter(action, [dashboard.uid], dashboardResource)).length > 0,
        ),
      );
      const folder = dashboard.folder_uid ? await findFolder(services.db, orgId, dashboard.folder_uid) : undefined;
      ctx.body = presentDashboard(dashboard, folder, { canEdit: canEdit!, canAdmin: canAdmin!, canDelete: canDelete! });
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/dashboards/uid/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Deletes a dashboard and every grant on it.',
    responses: { 200: DASHBOARD_DELETED_SCHEMA },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      await authorize('dashboards:delete', dashboardResource(params.uid));
      const now = services.clock.now();
      const dashboard = await services.transact(async (tx) => {
        const current = await findDashboardOrFail(tx.db, orgId, params.uid, true);
        await deleteDashboard(tx, current);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'dashboard.deleted', orgId, target: dashboardAuditTarget(current), metadata: { folderUid: current.folder_uid, version: current.version } },
          now,
        );
        return current;
      });
      ctx.body = { uid: dashboard.uid, title: dashboard.title, message: `Dashboard ${dashboard.title} deleted` };
    },
  });

  dashboardSearchRoutes(routes);
};
