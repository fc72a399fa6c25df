/**
 * The answers of the entry points that return more than a decision (authz/visible,
 * authz/label_rules), checked before the service trusts them: anything the policy returns in
 * another shape is a policy failure, and the engine fails closed on it.
 */
import type { LabelRulesAnswer, VisibleSet } from './types.ts';

/** What a caller sees when the policy fails: nothing. */
export const NOTHING_VISIBLE: Readonly<VisibleSet> = Object.freeze({ all: false, folders: Object.freeze([]), items: Object.freeze([]) });

const isUidList = (value: unknown): value is string[] => Array.isArray(value) && value.every((uid) => typeof uid === 'string');

/** authz/visible's answer, checked and frozen. */
export function visibleSetOf(result: unknown): Readonly<VisibleSet> {
  const answer = result as { all?: unknown; folders?: unknown; items?: unknown } | undefined;
  if (answer?.all === true) return Object.freeze({ all: true });
  if (answer?.all === false && isUidList(answer.folders) && isUidList(answer.items)) {
    return Object.freeze({ all: false, folders: Object.freeze(answer.folders), items: Object.freeze(answer.items) });
  }
  throw new Error('policy returned no visible set');
}

const LABEL_RULE_MODES: ReadonlySet<string> = new Set(['none', 'bypass', 'applied', 'denied']);

/** authz/label_rules' answer, checked. */
export function labelRulesAnswerOf(result: unknown): LabelRulesAnswer {
  const answer = result as Partial<LabelRulesAnswer> | undefined;
  if (answer && typeof answer.mode === 'string' && LABEL_RULE_MODES.has(answer.mode) && Array.isArray(answer.selectors)) return answer as LabelRulesAnswer;
  throw new Error('policy returned no label-rules answer');
}
