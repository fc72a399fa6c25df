/**
 * Resource permissions (`…/permissions` of folders, dashboards and the alert rules of a folder),
 * as the spec and Grafana's API have them: GET lists the direct grants (for a dashboard also
 * those its folders give it, marked inherited); POST replaces the direct grants in bulk.
 * Granting needs `*.permissions:write` on the resource and, in the same decision, every
 * permission the new grants give (delegation: nobody grants what they do not hold).
 */
import { actorOf } from '../http/actor.ts';
import { findDashboardOrFail, dashboardAuditTarget, dashboardResource } from '../dashboards/target.ts';
import { findAncestors } from '../folders/store.ts';
import { findFolderOrFail, folderAuditTarget, folderResource } from '../folders/target.ts';
import { uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { ALERT_RULE_GRANTS, DASHBOARD_GRANTS, FOLDER_GRANTS } from './levels.ts';
import { grantedPermissions, grantItemsSchema, listGrants, replaceGrants, resolveGrantItems } from './resource-grants.ts';

const folderUidParams = {
  type: 'object',
  properties: { folderUid: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['folderUid'],
} as const;

export const permissionRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/folders/:uid/permissions',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('folders.permissions:read', folderResource(params.uid));
      const folder = await findFolderOrFail(services.db, orgId, params.uid);
      ctx.body = await listGrants(services.db, orgId, FOLDER_GRANTS, folder.uid);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/folders/:uid/permissions',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: grantItemsSchema,
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('folders.permissions:write', folderResource(params.uid), { delegate: grantedPermissions(FOLDER_GRANTS, params.uid, body.items) });
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const folder = await findFolderOrFail(tx.db, orgId, params.uid, true);
        const grants = await resolveGrantItems(tx.db, orgId, body.items);
        await replaceGrants(tx, actorOf(ctx, principal), orgId, FOLDER_GRANTS, folderAuditTarget(folder), grants, now);
      });
      ctx.body = { message: 'Folder permissions updated' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/dashboards/uid/:uid/permissions',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('dashboards.permissions:read', dashboardResource(params.uid));
      const dashboard = await findDashboardOrFail(services.db, orgId, params.uid);
      const folder = dashboard.folder_uid ? await findFolderOrFail(services.db, orgId, dashboard.folder_uid) : null;
      const folderUids = folder ? [folder.uid, ...(await findAncestors(services.db, orgId, folder)).map((ancestor) => ancestor.uid)] : [];
      ctx.body = await listGrants(services.db, orgId, DASHBOARD_GRANTS, dashboard.uid, { family: FOLDER_GRANTS, folderUids });
    },
  });

  routes.add({
    method: 'post',
    path: '/api/dashboards/uid/:uid/permissions',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: grantItemsSchema,
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('dashboards.permissions:write', dashboardResource(params.uid), {
        delegate: grantedPermissions(DASHBOARD_GRANTS, params.uid, body.items),
      });
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const dashboard = await findDashboardOrFail(tx.db, orgId, params.uid, true);
        const grants = await resolveGrantItems(tx.db, orgId, body.items);
        await replaceGrants(tx, actorOf(ctx, principal), orgId, DASHBOARD_GRANTS, dashboardAuditTarget(dashboard), grants, now);
      });
      ctx.body = { message: 'Dashboard permissions updated' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/access-control/alert.rules/:folderUid/permissions',
    access: 'authenticated',
    level: 'org',
    params: folderUidParams,
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('alert.rules.permissions:read', folderResource(params.folderUid));
      const folder = await findFolderOrFail(services.db, orgId, params.folderUid);
      ctx.body = await listGrants(services.db, orgId, ALERT_RULE_GRANTS, folder.uid);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/access-control/alert.rules/:folderUid/permissions',
    access: 'authenticated',
    level: 'org',
    params: folderUidParams,
    body: grantItemsSchema,
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('alert.rules.permissions:write', folderResource(params.folderUid), {
        delegate: grantedPermissions(ALERT_RULE_GRANTS, params.folderUid, body.items),
      });
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const folder = await findFolderOrFail(tx.db, orgId, params.folderUid, true);
        const grants = await resolveGrantItems(tx.db, orgId, body.items);
        await replaceGrants(tx, actorOf(ctx, principal), orgId, ALERT_RULE_GRANTS, { type: 'alert.rules', id: folder.uid, name: folder.title }, grants, now);
      });
      ctx.body = { message: 'Alert rule permissions updated' };
    },
  });
};
