/**
 * Resource permissions (`…/permissions` of folders, dashboards, the alert rules of a folder and
 * connectors), as the spec and Grafana's API have them: GET lists the direct grants (for a
 * dashboard or the alert rules of a folder also those its folders give it, marked inherited);
 * POST replaces the direct grants in bulk.
 * Granting needs `*.permissions:write` on the resource and, in the same decision, every
 * permission the new grants give (delegation: nobody grants what they do not hold).
 */
import type { Knex } from 'knex';
import type { Action } from '../authz/actions.ts';
import type { ResourceRef } from '../authz/types.ts';
import { connectorAuditTarget, connectorResource, findConnectorOrFail } from '../connectors/target.ts';
import { dashboardAuditTarget, dashboardResource, findDashboardOrFail } from '../dashboards/target.ts';
import { findAncestors } from '../folders/store.ts';
import { findFolderOrFail, folderAuditTarget, folderResource } from '../folders/target.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { ALERT_RULE_GRANTS, CONNECTOR_GRANTS, DASHBOARD_GRANTS, FOLDER_GRANTS, type GrantFamily } from './levels.ts';
import { grantedPermissions, GRANT_SCHEMA, grantItemsSchema, listGrants, replaceGrants, resolveGrantItems } from './resource-grants.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

/** A resource whose permissions are managed here: where, how it is asked for and found, what it inherits. */
interface PermissionTarget {
  path: string;
  /** The path parameter naming the resource (the spec names the alert rules' folder `folderUid`). */
  param: 'uid' | 'folderUid';
  family: GrantFamily;
  read: Action;
  write: Action;
  resource(uid: string): ResourceRef;
  /**
   * The resource in the org (404 when missing), with its audit target and the folder its inherited
   * grants start from; `lock` keeps writers of its grants in turn.
   */
  find(db: Knex, orgId: string, uid: string, lock?: boolean): Promise<{ target: { type: string; id: string; name: string }; folderUid: string | null }>;
  /** The families through which its folders' grants reach it, when they do (dashboards, alert rules). */
  inheritsThrough?: readonly GrantFamily[];
  updated: string;
  /** What the resource is called in the API document's summaries. */
  noun: string;
}

const TARGETS: PermissionTarget[] = [
  {
    path: '/api/folders/:uid/permissions',
    param: 'uid',
    family: FOLDER_GRANTS,
    read: 'folders.permissions:read',
    write: 'folders.permissions:write',
    resource: folderResource,
    async find(db, orgId, uid, lock) {
      const folder = await findFolderOrFail(db, orgId, uid, lock);
      return { target: folderAuditTarget(folder), folderUid: null };
    },
    updated: 'Folder permissions updated',
    noun: 'a folder',
  },
  {
    path: '/api/dashboards/uid/:uid/permissions',
    param: 'uid',
    family: DASHBOARD_GRANTS,
    read: 'dashboards.permissions:read',
    write: 'dashboards.permissions:write',
    resource: dashboardResource,
    async find(db, orgId, uid, lock) {
      const dashboard = await findDashboardOrFail(db, orgId, uid, lock);
      return { target: dashboardAuditTarget(dashboard), folderUid: dashboard.folder_uid };
    },
    inheritsThrough: [FOLDER_GRANTS],
    updated: 'Dashboard permissions updated',
    noun: 'a dashboard',
  },
  {
    path: '/api/access-control/alert.rules/:folderUid/permissions',
    param: 'folderUid',
    family: ALERT_RULE_GRANTS,
    read: 'alert.rules.permissions:read',
    write: 'alert.rules.permissions:write',
    resource: folderResource,
    async find(db, orgId, uid, lock) {
      const folder = await findFolderOrFail(db, orgId, uid, lock);
      return { target: { type: 'alert.rules', id: folder.uid, name: folder.title }, folderUid: folder.uid };
    },
    // The folder's own grants and those of each folder above reach its rules, as do the
    // alert-rule grants of the folders above.
    inheritsThrough: [FOLDER_GRANTS, ALERT_RULE_GRANTS],
    updated: 'Alert rule permissions updated',
    noun: 'the alert rules of a folder',
  },
  {
    path: '/api/connectors/:uid/permissions',
    param: 'uid',
    family: CONNECTOR_GRANTS,
    read: 'connectors.permissions:read',
    write: 'connectors.permissions:write',
    resource: connectorResource,
    async find(db, orgId, uid, lock) {
      const connector = await findConnectorOrFail(db, orgId, uid, lock);
      return { target: connectorAuditTarget(connector), folderUid: null };
    },
    updated: 'Connector permissions updated',
    noun: 'a connector',
  },
];

/** The folder and each ancestor, nearest first: where a dashboard's or an alert rule's inherited grants come from. */
async function folderChain(db: Knex, orgId: string, folderUid: string | null): Promise<string[]> {
  if (!folderUid) return [];
  const folder = await findFolderOrFail(db, orgId, folderUid);
  return [folder.uid, ...(await findAncestors(db, orgId, folder)).map((ancestor) => ancestor.uid)];
}

const paramsNaming = (param: PermissionTarget['param']) =>
  ({ type: 'object', properties: { [param]: { type: 'string', minLength: 1, maxLength: 40 } }, required: [param] }) as const;

export const permissionRoutes: RouteModule = (routes) => {
  for (const target of TARGETS) {
    const { path } = target;
    const params = paramsNaming(target.param);
    const uidOf = (named: Record<string, string | undefined>) => named[target.param]!;

    routes.add({
      method: 'get',
      path,
      access: 'authenticated',
      level: 'org',
      params,
      summary: `Lists the direct grants on ${target.noun}${target.inheritsThrough ? ', then those its folders give it (inherited)' : ''}.`,
      responses: { 200: { type: 'array', items: GRANT_SCHEMA } },
      async handler({ ctx, params: named, orgId, services, authorize }) {
        const uid = uidOf(named);
        await authorize(target.read, target.resource(uid));
        const { folderUid } = await target.find(services.db, orgId, uid);
        const inherited = target.inheritsThrough && { families: target.inheritsThrough, folderUids: await folderChain(services.db, orgId, folderUid) };
        ctx.body = await listGrants(services.db, orgId, target.family, uid, inherited);
      },
    });

    routes.add({
      method: 'post',
      path,
      access: 'authenticated',
      level: 'org',
      params,
      body: grantItemsSchema,
      summary: `Replaces the direct grants on ${target.noun}; the caller must hold every permission they give.`,
      responses: { 200: MESSAGE_SCHEMA },
      async handler({ ctx, params: named, body, principal, orgId, services, authorize }) {
        const uid = uidOf(named);
        await authorize(target.write, target.resource(uid), { delegate: grantedPermissions(target.family, uid, body.items) });
        const now = services.clock.now();
        await services.transact(async (tx) => {
          const found = await target.find(tx.db, orgId, uid, true);
          const grants = await resolveGrantItems(tx.db, orgId, body.items);
          await replaceGrants(tx, actorOf(ctx, principal), orgId, target.family, found.target, grants, now);
        });
        ctx.body = { message: target.updated };
      },
    });
  }
};
