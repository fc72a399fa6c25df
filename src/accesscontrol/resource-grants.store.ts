/**
 * Grants that name a resource which is going away. A folder, dashboard, alert rule or connector leaves no
 * permission behind on its scope (a later resource with the same uid must not inherit it), nor
 * legacy ACL entries; the policy re-reads the roles that lost a permission.
 */
import type { Tx } from '../db/transaction.ts';

/** Deletes every permission of the org's roles on `scopes`, and the legacy ACL entries of the folders and dashboards. */
export async function removeGrantsOnScopes(
  tx: Tx,
  orgId: string,
  resources: { folderUids: string[]; dashboardUids: string[]; alertRuleUids: string[]; connectorUids?: string[] },
): Promise<void> {
  const scopes = [
    ...(resources.connectorUids ?? []).map((uid) => `connectors:uid:${uid}`),
    ...resources.folderUids.map((uid) => `folders:uid:${uid}`),
    ...resources.dashboardUids.map((uid) => `dashboards:uid:${uid}`),
    ...resources.alertRuleUids.map((uid) => `alert.rules:uid:${uid}`),
  ];
  if (scopes.length === 0) return;
  const roles: Array<{ id: number; uid: string }> = await tx
    .db('roles as r')
    .join('role_permissions as p', 'p.role_id', 'r.id')
    .where('r.org_id', orgId)
    .whereIn('p.scope', scopes)
    .distinct('r.id', 'r.uid');
  if (roles.length > 0) {
    await tx
      .db('role_permissions')
      .whereIn(
        'role_id',
        roles.map((role) => role.id),
      )
      .whereIn('scope', scopes)
      .delete();
  }
  const legacyRemoved = await tx
    .db('legacy_acl')
    .where('org_id', orgId)
    .where((q) => q.whereIn('folder_uid', resources.folderUids).orWhereIn('dashboard_uid', resources.dashboardUids))
    .delete();
  const fragments = [...roles.map((role) => ({ kind: 'role' as const, uid: role.uid })), ...(legacyRemoved > 0 ? [{ kind: 'legacy_acl' as const }] : [])];
  // no fragment would mean "everything changed": report only when something did
  if (fragments.length > 0) tx.policyChanged(orgId, ...fragments);
}
