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

const textMap = { type: 'object', additionalProperties: { type: 'string' } } as const;

/** What presentAlertRule sends: the stored definition (as the rule was saved) and the columns. */
export const ALERT_RULE_SCHEMA = {
  type: 'object',
  properties: {
    uid: { type: 'string' },
    orgID: { type: 'string' },
    folderUID: { type: 'string' },
    ruleGroup: { type: 'string' },
    title: { type: 'string' },
    condition: { type: 'string' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          refId: { type: 'string' },
          datasourceUid: { type: 'string' },
          queryType: { type: 'string' },
          relativeTimeRange: { type: 'object', properties: { from: { type: 'integer' }, to: { type: 'integer' } }, required: ['from', 'to'] },
          // the query as its data source reads it: free-form
          model: { type: 'object' },
        },
        required: ['refId', 'datasourceUid', 'model'],
      },
    },
    for: { type: 'string' },
    labels: textMap,
    annotations: textMap,
    noDataState: { enum: ['Alerting', 'NoData', 'OK'] },
    execErrState: { enum: ['Alerting', 'Error', 'OK'] },
    isPaused: { type: 'boolean' },
    version: { type: 'integer' },
    updated: { type: 'string' },
    provenance: { type: 'string' },
  },
  required: [
    'uid',
    'orgID',
    'folderUID',
    'ruleGroup',
    'title',
    'condition',
    'data',
    'for',
    'noDataState',
    'execErrState',
    'isPaused',
    'version',
    'updated',
    'provenance',
  ],
} as const;
