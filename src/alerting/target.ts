/** What the alert-rule routes and the folder delete share: the policy target and the audit target of a rule. */
import type { ResourceRef } from '../authz/types.ts';

/** A rule as a policy target: its candidate scopes run up its folder's chain. */
export const alertRuleResource = (uid: string): ResourceRef => ({ kind: 'alert.rules', uid });

export const alertRuleAuditTarget = (rule: { uid: string; title: string }) => ({ type: 'alert_rule', id: rule.uid, name: rule.title });
