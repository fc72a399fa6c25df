/**
 * A folder delete removes its whole tree, so it is decided as one request over everything it
 * removes: `folders:delete` on the folder and, in the same decision (`requires`), the delete
 * action on every subfolder, dashboard and (with forceDeleteRules) alert rule, each asked as if
 * deleted on its own. A caller who may not delete one of them deletes none of them. The tree
 * decided on is the tree deleted: read again under lock in the transaction, anything that came
 * in meanwhile makes the delete a conflict.
 */
import { alertRuleAuditTarget, alertRuleResource } from '../alerting/target.ts';
import type { AuditEvent } from '../audit/writer.ts';
import type { Requirement } from '../authz/types.ts';
import { dashboardAuditTarget, dashboardResource } from '../dashboards/target.ts';
import { BadRequestError, ConflictError } from '../errors.ts';
import type { FolderTreeContents } from './store.ts';
import { folderAuditTarget, folderResource } from './target.ts';

/**
 * The most subfolders, dashboards and alert rules one delete removes. Each is a requirement of
 * the one decision, asked as its own delete would be, so the policy's work grows with them (at
 * the bound a few tens of milliseconds to allow, about 0.1 s to refuse, on the event loop); a
 * larger tree is deleted a part at a time (its subfolders first).
 */
export const MAX_FOLDER_DELETE_ITEMS = 1000;

/** A tree past the bound, once the caller may delete the folder at all: what to do instead. */
export const tooManyToDelete = (uid: string) =>
  new BadRequestError(
    `folder ${uid} holds more than the ${MAX_FOLDER_DELETE_ITEMS} subfolders, dashboards and alert rules one delete removes: delete some of them first`,
  );

/** The delete action on everything the delete removes besides the folder: what the same decision requires. */
export function deletionRequirements(contents: FolderTreeContents, withRules: boolean): Requirement[] {
  return [
    ...contents.folders.slice(1).map((folder) => ({ action: 'folders:delete', resource: folderResource(folder.uid) })),
    ...contents.dashboards.map((dashboard) => ({ action: 'dashboards:delete', resource: dashboardResource(dashboard.uid) })),
    ...(withRules ? contents.alertRules.map((rule) => ({ action: 'alert.rules:delete', resource: alertRuleResource(rule.uid) })) : []),
  ];
}

/**
 * Refuses a delete whose tree gained something since it was decided on, past the bound too (what
 * left it is simply not deleted).
 */
export function assertDecidedOn(uid: string, current: FolderTreeContents | undefined, decided: FolderTreeContents): asserts current is FolderTreeContents {
  if (!current) throw changedMeanwhile(uid);
  const known = new Set([
    ...decided.folders.map((folder) => `f:${folder.uid}`),
    ...decided.dashboards.map((dashboard) => `d:${dashboard.uid}`),
    ...decided.alertRules.map((rule) => `r:${rule.uid}`),
  ]);
  const keys = [
    ...current.folders.map((folder) => `f:${folder.uid}`),
    ...current.dashboards.map((dashboard) => `d:${dashboard.uid}`),
    ...current.alertRules.map((rule) => `r:${rule.uid}`),
  ];
  if (keys.some((key) => !known.has(key))) throw changedMeanwhile(uid);
}

const changedMeanwhile = (uid: string) => new ConflictError(`folder ${uid} changed while it was being deleted: try again`);

/**
 * One audit entry per removed folder, dashboard and alert rule, each as its own delete writes it;
 * those below the folder name it as `deletedWithFolder`. The folder's own entry counts them.
 */
export function deletionAudits(orgId: string, contents: FolderTreeContents): AuditEvent[] {
  const [folder, ...subfolders] = contents.folders;
  const deletedWithFolder = folder!.uid;
  return [
    {
      action: 'folder.deleted',
      orgId,
      target: folderAuditTarget(folder!),
      metadata: { folders: contents.folders.length, dashboards: contents.dashboards.length, alertRules: contents.alertRules.length },
    },
    ...subfolders.map((subfolder) => ({
      action: 'folder.deleted',
      orgId,
      target: folderAuditTarget(subfolder),
      metadata: { parentUid: subfolder.parent_uid, deletedWithFolder },
    })),
    ...contents.dashboards.map((dashboard) => ({
      action: 'dashboard.deleted',
      orgId,
      target: dashboardAuditTarget(dashboard),
      metadata: { folderUid: dashboard.folder_uid, version: dashboard.version, deletedWithFolder },
    })),
    ...contents.alertRules.map((rule) => ({
      action: 'alert_rule.deleted',
      orgId,
      target: alertRuleAuditTarget(rule),
      metadata: { folderUid: rule.folder_uid, ruleGroup: rule.rule_group, deletedWithFolder },
    })),
  ];
}
