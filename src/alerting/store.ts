/**
 * SQL of alert rules. A rule lives in one folder of its org and is reached through it (rule
 * permissions are folder-scoped); its definition is JSON beside the columns the policy and the
 * lists need. Writes go through folders/foldered.store.ts, which tells the policy writer.
 */
import type { Knex } from 'knex';
import type { Tx } from '../db/transaction.ts';
import { ALERT_RULES, deleteFoldered, findFoldered, findFolderedByUids, insertFoldered, updateFoldered, type FolderedRow } from '../folders/foldered.store.ts';

export interface AlertRuleRow extends FolderedRow {
  /** A rule always lives in a folder. */
  folder_uid: string;
  rule_group: string;
}

/** What a save writes: the columns, and the rest of the definition as JSON. */
export interface AlertRuleContent {
  title: string;
  folderUid: string;
  ruleGroup: string;
  definition: Record<string, unknown>;
}

const RULE_COLUMNS = ALERT_RULES.columns;

/** `lock`: on MySQL the row stays locked until the transaction ends. */
export const findAlertRule = (db: Knex, orgId: string, uid: string, lock = false) => findFoldered<AlertRuleRow>(db, ALERT_RULES, orgId, uid, lock);

/** Another rule of the folder with this title (titles are unique per folder, as in Grafana). */
export async function findAlertRuleByTitle(db: Knex, orgId: string, folderUid: string, title: string): Promise<AlertRuleRow | undefined> {
  return db('alert_rules')
    .where({ org_id: orgId, folder_uid: folderUid, title })
    .first(...RULE_COLUMNS);
}

/**
 * The org's rules (of one folder when given), by title, as uid and definition: the caller
 * filters them through the policy (which needs the connectors each reads) before loading a page.
 */
export async function findAlertRuleDefinitions(db: Knex, orgId: string, folderUid: string | undefined): Promise<Array<Pick<AlertRuleRow, 'uid' | 'data'>>> {
  const query = db('alert_rules').where('org_id', orgId);
  if (folderUid) query.where('folder_uid', folderUid);
  return query.orderBy([{ column: 'title' }, { column: 'uid' }]).select('uid', 'data');
}

/** The rules of `uids`, in the order of `uids`. */
export const findAlertRulesByUids = (db: Knex, orgId: string, uids: string[]) => findFolderedByUids<AlertRuleRow>(db, ALERT_RULES, orgId, uids);

const saved = (content: AlertRuleContent) => ({
  title: content.title,
  folderUid: content.folderUid,
  content: content.definition,
  extra: { rule_group: content.ruleGroup },
});

export const insertAlertRule = (tx: Tx, orgId: string, uid: string, content: AlertRuleContent, createdBy: string, now: number) =>
  insertFoldered(tx, ALERT_RULES, orgId, uid, saved(content), createdBy, now);

/** Replaces the rule as its next version; its grants stay. */
export const updateAlertRule = (tx: Tx, current: AlertRuleRow, content: AlertRuleContent, updatedBy: string, now: number) =>
  updateFoldered(tx, ALERT_RULES, current, saved(content), updatedBy, now);

/** Deletes the rule and every grant on it. */
export const deleteAlertRule = (tx: Tx, rule: AlertRuleRow) => deleteFoldered(tx, ALERT_RULES, rule);
