/** Alert rules as the API shows them: Grafana's provisioned-rule fields. */
import type { AlertRuleRow } from './store.ts';

export function presentAlertRule(rule: AlertRuleRow) {
  const definition = rule.data ? (JSON.parse(rule.data) as Record<string, unknown>) : {};
  return {
    ...definition,
    uid: rule.uid,
    orgID: rule.org_id,
    folderUID: rule.folder_uid,
    ruleGroup: rule.rule_group,
    title: rule.title,
    version: rule.version,
    updated: new Date(Number(rule.updated_at)).toISOString(),
    provenance: '',
  };
}
