/**
 * SQL of alert rules. A rule lives in one folder of its org and is reached through it (rule
 * permissions are folder-scoped); its definition is JSON beside the columns the policy and the
 * lists need. Writes report the policy's `alert_rule` fragment.
 */
import type { Knex } from 'knex';
import { removeGrantsOnResources } from '../accesscontrol/grants.ts';
import type { Tx } from '../db/transaction.ts';

export interface AlertRuleRow {
  org_id: string;
  uid: string;
  title: string;
  folder_uid: string;
  rule_group: string;
  data: string | null;
  version: number;
  created_at: number;
  updated_at: number;
  created_by: string | null;
  updated_by: string | null;
}

/** What a save writes: the columns, and the rest of the definition as JSON. */
export interface AlertRuleContent {
  title: string;
  folderUid: string;
  ruleGroup: string;
  definition: Record<string, unknown>;
}

const RULE_COLUMNS = ['org_id', 'uid', 'title', 'folder_uid', 'rule_group', 'data', 'version', 'created_at', 'updated_at', 'created_by', 'updated_by'] as const;

export async function findAlertRule(db: Knex, orgId: string, uid: string): Promise<AlertRuleRow | undefined> {
  return db('alert_rules')
    .where({ org_id: orgId, uid })
    .first(...RULE_COLUMNS);
}

/** Another rule of the folder with this title (titles are unique per folder, as in Grafana). */
export async function findAlertRuleByTitle(db: Knex, orgId: string, folderUid: string, title: string): Promise<AlertRuleRow | undefined> {
  return db('alert_rules')
    .where({ org_id: orgId, folder_uid: folderUid, title })
    .first(...RULE_COLUMNS);
}

/** Uids of the org's rules (of one folder when given), by title. Only uids: the caller filters them through the policy first. */
export async function findAlertRuleUids(db: Knex, orgId: string, folderUid: string | undefined): Promise<string[]> {
  const query = db('alert_rules').where('org_id', orgId);
  if (folderUid) query.where('folder_uid', folderUid);
  return query.orderBy([{ column: 'title' }, { column: 'uid' }]).pluck('uid');
}

/** The rules of `uids`, in the order of `uids`. */
export async function findAlertRulesByUids(db: Knex, orgId: string, uids: string[]): Promise<AlertRuleRow[]> {
  if (uids.length === 0) return [];
  const rows: AlertRuleRow[] = await db('alert_rules')
    .where('org_id', orgId)
    .whereIn('uid', uids)
    .select(...RULE_COLUMNS);
  const byUid = new Map(rows.map((row) => [row.uid, row]));
  return uids.map((uid) => byUid.get(uid)).filter((row): row is AlertRuleRow => row !== undefined);
}

export async function insertAlertRule(tx: Tx, orgId: string, uid: string, content: AlertRuleContent, createdBy: string, now: number): Promise<void> {
  await tx.db('alert_rules').insert({
    org_id: orgId,
    uid,
    title: content.title,
    folder_uid: content.folderUid,
    rule_group: content.ruleGroup,
    data: JSON.stringify(content.definition),
    version: 1,
    created_at: now,
    updated_at: now,
    created_by: createdBy,
    updated_by: createdBy,
  });
  tx.policyChanged(orgId, { kind: 'alert_rule', uid });
}

export async function updateAlertRule(tx: Tx, current: AlertRuleRow, content: AlertRuleContent, updatedBy: string, now: number): Promise<void> {
  await tx
    .db('alert_rules')
    .where({ org_id: current.org_id, uid: current.uid })
    .update({
      title: content.title,
      folder_uid: content.folderUid,
      rule_group: content.ruleGroup,
      data: JSON.stringify(content.definition),
      version: current.version + 1,
      updated_by: updatedBy,
      updated_at: now,
    });
  if (content.folderUid !== current.folder_uid) tx.policyChanged(current.org_id, { kind: 'alert_rule', uid: current.uid });
}

/** Deletes the rule and every grant on it. */
export async function deleteAlertRule(tx: Tx, rule: AlertRuleRow): Promise<void> {
  await removeGrantsOnResources(tx, rule.org_id, { alertRuleUids: [rule.uid] });
  await tx.db('alert_rules').where({ org_id: rule.org_id, uid: rule.uid }).delete();
  tx.policyChanged(rule.org_id, { kind: 'alert_rule', uid: rule.uid });
}
