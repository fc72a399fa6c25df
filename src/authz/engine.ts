/**
 * The policy engine: the only place permissions are evaluated, against the org documents this
 * instance keeps at the change log's heads, with the answers it gives kept under the documents'
 * seqs (both held by src/authz/policy-runtime.ts). It fails closed on any error.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ALLOWED, frozen, frozenDecision, MAX_CACHED_INPUT_CHARS, type answerCaches } from './decision-cache.ts';
import type { DecisionLog } from './decision-log.ts';
import type { OrgPolicy } from './loaded-document.ts';
import { PolicyRuntime, type EngineOptions } from './policy-runtime.ts';
import { labelRulesAnswerOf, NOTHING_VISIBLE, visibleSetOf } from './answer-shapes.ts';
import {
  activeOrgKey,
  activeOrgPolicyInput,
  decisionKey,
  filterKey,
  filterPolicyInput,
  permissionsKey,
  policyInput,
  subjectCopy,
  visibleKey,
  visiblePolicyInput,
} from './input-key.ts';
import type {
  ActiveOrgInput,
  AuthzInput,
  Decision,
  FilterInput,
  LabelRulesAnswer,
  LabelRulesInput,
  OrgDocument,
  PermissionMap,
  Subject,
  VisibleInput,
  VisibleSet,
} from './types.ts';
import type { PolicyInstance, PolicyModule } from './wasm.ts';

export type { EngineOptions, EngineStats } from './policy-runtime.ts';

/** Told of every authorize(): its outcome (error: the policy failed) and how long it took (src/metrics). */
export interface DecisionObserver {
  decision(outcome: 'allow' | 'deny' | 'error', seconds: number): void;
}

const unobserved: DecisionObserver = { decision() {} };

export class AuthzEngine extends PolicyRuntime {
  constructor(
    db: Knex,
    policy: PolicyModule,
    options: EngineOptions,
    logger: Logger,
    private readonly observer: DecisionObserver = unobserved,
    decisionLog: DecisionLog | null = null,
  ) {
    super(db, policy, options, logger, decisionLog);
  }

  /** The decision that lets a request act or refuses it: observed (metrics) and, when on, written to the decision log. */
  async authorize(input: AuthzInput): Promise<Decision> {
    const started = performance.now();
    let outcome: 'allow' | 'deny' | 'error' = 'error';
    try {
      // The kept answers of the policy whose documents answer: a reload while this waits swaps both, and this answer stays with the replaced ones.
      const kept = this.kept;
      // ready() first: it brings the document to every head seen so far, and the answers kept are those of its seqs.
      // Awaited only when it has work to do: an await of a loaded org would still cost a turn of the microtask queue.
      const ready = this.documents.ready(input.org_id);
      const org = ready instanceof Promise ? await ready : ready;
      const evaluated = this.decisionLog ? performance.now() : 0;
      const result = this.enforce(org, input, kept);
      outcome = result.allow ? 'allow' : 'deny';
      this.decisionLog?.record(input, result, Math.round((performance.now() - evaluated) * 1e6), new Date());
      return result;
    } catch (err) {
      return this.failClosed(err);
    } finally {
      this.observer.decision(outcome, (performance.now() - started) / 1000);
    }
  }

  /**
   * What the policy decides for an input that enforces nothing (evaluate, who-can, the CLI's
   * explain): the same entry point as authorize(), neither counted in the metrics nor logged.
   */
  async explain(input: AuthzInput): Promise<Decision> {
    try {
      const org = await this.documents.ready(input.org_id);
      return this.decision(org.instance, JSON.stringify(input));
    } catch (err) {
      return this.failClosed(err);
    }
  }

  /**
   * Decisions against a document of the caller's making (who-can asks of teams, roles and org
   * roles as if each were a member), in an instance of their own: no org's loaded document is
   * touched. Each input fails closed on its own.
   */
  async explainAgainst(document: OrgDocument, inputs: AuthzInput[]): Promise<Decision[]> {
    const instance = await this.policy.instantiate();
    instance.setData(document);
    return inputs.map((input) => {
      const result = instance.evaluate('authz/decision', input) as Decision | undefined;
      return result && typeof result.allow === 'boolean' && Array.isArray(result.reasons) ? result : this.failClosed(new Error('policy returned no decision'));
    });
  }

  /**
   * The answer that enforces `input`: a kept one when the same input was asked against the same
   * document, else authz/enforce (or, for the decision log, the whole authz/decision).
   */
  private enforce(org: OrgPolicy, input: AuthzInput, answers: ReturnType<typeof answerCaches>): Readonly<Decision> {
    const key = decisionKey(input);
    const kept = answers.decisions.get(org, key);
    if (kept) {
      this.counters.keptDecisionHits++;
      return kept;
    }
    const json = JSON.stringify(policyInput(input));
    const result = this.decisionLog ? this.decision(org.instance, json) : this.allowedOrRefused(org.instance, json);
    answers.decisions.set(org, key, result === ALLOWED ? ALLOWED : frozenDecision(result));
    return result;
  }

  /** authz/enforce: true, or the refusal with what was missing and the message the caller may see, from one evaluation. */
  private allowedOrRefused(instance: PolicyInstance, json: string): Decision {
    const result = instance.evaluateJson('authz/enforce', json) as Decision | true | undefined;
    if (result === true) return ALLOWED;
    if (!result || result.allow !== false || !Array.isArray(result.reasons)) throw new Error('policy returned no enforcement answer');
    return result;
  }

  private decision(instance: PolicyInstance, json: string): Decision {
    const result = instance.evaluateJson('authz/decision', json) as Decision | undefined;
    if (!result || typeof result.allow !== 'boolean' || !Array.isArray(result.reasons)) throw new Error('policy returned no decision');
    return result;
  }

  /**
   * Whether the request may act in the org it asks for (authz/active_org). The policy reads only
   * the input, so this evaluates it without any org's document: an org id the caller made up
   * loads none and costs no database read, and a refused request never gets to authorize().
   */
  async activeOrg(input: ActiveOrgInput): Promise<Decision> {
    try {
      // It reads only the input: an answer once given stays right.
      const key = activeOrgKey(input);
      const answers = this.kept;
      const kept = answers.activeOrg.get(key);
      if (kept) return kept;
      const inputOnly = (this.inputOnly ??= this.policy.instantiate());
      const result = (await inputOnly).evaluateJson('authz/active_org', JSON.stringify(activeOrgPolicyInput(input))) as Decision | undefined;
      if (!result || typeof result.allow !== 'boolean' || !Array.isArray(result.reasons)) {
        return this.failClosed(new Error('policy returned no active-org decision'));
      }
      if (key.length <= MAX_CACHED_INPUT_CHARS) {
        answers.activeOrg.set(key, frozenDecision(result));
      }
      return result;
    } catch (err) {
      return this.failClosed(err);
    }
  }

  /** What `subject` holds in the org, `{action: [scope]}`; frozen: a repeat of the same question gets the same object. */
  async permissions(subject: Subject, orgId: string | null): Promise<Readonly<PermissionMap>> {
    try {
      // ready() first: it brings the document to every head seen so far, and the maps kept are those of its seqs.
      const answers = this.kept;
      const org = await this.documents.ready(orgId);
      const key = permissionsKey(subject, orgId);
      const cached = answers.permissionMaps.get(org, key);
      if (cached) return cached;
      const result = org.instance.evaluate('authz/permissions', { subject: subjectCopy(subject), org_id: orgId });
      if (!result || typeof result !== 'object') return {};
      // Sorting is the caller's job: sort() in wasm is quadratic on large scope sets.
      const sorted: PermissionMap = {};
      for (const action of Object.keys(result).sort()) sorted[action] = [...(result as PermissionMap)[action]!].sort();
      answers.permissionMaps.set(org, key, frozen(sorted));
      return sorted;
    } catch (err) {
      this.failClosed(err);
      return {};
    }
  }

  /** The indexes of `input.resources` on which the action is allowed: a kept answer when the same list was asked against the same document. */
  async filter(input: FilterInput): Promise<number[]> {
    if (input.resources.length === 0) return [];
    try {
      // ready() first: it brings the document to every head seen so far, and the answers kept are those of its seqs.
      const answers = this.kept;
      const org = await this.documents.ready(input.org_id);
      const key = filterKey(input);
      const kept = answers.filters.get(org, key);
      if (kept) {
        this.counters.keptFilterHits++;
        return [...kept];
      }
      const result = org.instance.evaluate('authz/filter', filterPolicyInput(input));
      const indexes = Array.isArray(result) ? (result as number[]) : [];
      answers.filters.set(org, key, Object.freeze([...indexes]));
      return indexes;
    } catch (err) {
      this.failClosed(err);
      return [];
    }
  }

  /**
   * The items of `input.kind` on which the action is allowed, as sets a query filters by
   * (authz/visible): a kept answer when the same was asked against the same document. Nothing
   * is visible when the policy fails.
   */
  async visible(input: VisibleInput): Promise<Readonly<VisibleSet>> {
    try {
      // ready() first: it brings the document to every head seen so far, and the answers kept are those of its seqs.
      const org = await this.documents.ready(input.org_id);
      const key = visibleKey(input);
      const kept = this.kept.visibleSets.get(org, key);
      if (kept) return kept;
      const answer = visibleSetOf(org.instance.evaluate('authz/visible', visiblePolicyInput(input)));
      this.kept.visibleSets.set(org, key, answer);
      return answer;
    } catch (err) {
      this.failClosed(err);
      return NOTHING_VISIBLE;
    }
  }

  /**
   * Which label rules apply to a read of a connector (authz/label_rules); `denied` when the policy
   * fails. Written to the decision log, when on, as the restriction the read was given.
   */
  async labelRules(input: LabelRulesInput): Promise<LabelRulesAnswer> {
    const evaluated = performance.now();
    const answer = await this.explainLabelRules(input);
    this.decisionLog?.recordLabelRules(input, answer, Math.round((performance.now() - evaluated) * 1e6), new Date());
    return answer;
  }

  /** The label rules that would apply to a read of a connector (evaluate, who-can): the same answer, not logged. */
  async explainLabelRules(input: LabelRulesInput): Promise<LabelRulesAnswer> {
    try {
      const org = await this.documents.ready(input.org_id);
      return labelRulesAnswerOf(
        org.instance.evaluate('authz/label_rules', { subject: subjectCopy(input.subject), org_id: input.org_id, resource: input.resource }),
      );
    } catch (err) {
      this.failClosed(err);
      return { mode: 'denied', selectors: [] };
    }
  }
}
