/**
 * The policy engine: the only place permissions are evaluated, against the org documents this
 * instance keeps at the change log's heads (src/authz/documents.ts), with the answers it gives
 * kept under the document's seqs (src/authz/decision-cache.ts). It fails closed on any error.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/errors.ts';
import type { PolicyChangeListener } from '../db/transaction.ts';
import type { Write } from '../db/write-watch.ts';
import type { DecisionLog } from './decision-log.ts';
import { buildOrgDocument, writesPolicyData } from './document.ts';
import { OrgDocuments, type DocumentOptions } from './documents.ts';
import type { OrgPolicy } from './loaded-document.ts';
import { checkLoadedDocuments } from './drift-check.ts';
import { activeOrgKey, activeOrgPolicyInput, decisionKey, filterKey, filterPolicyInput, permissionsKey, policyInput, subjectCopy } from './input-key.ts';
import type { ActiveOrgInput, AuthzInput, Decision, FilterInput, LabelRulesAnswer, LabelRulesInput, OrgDocument, PermissionMap, Subject } from './types.ts';
import { ALLOWED, answerCaches, frozen, frozenDecision, MAX_CACHED_INPUT_CHARS } from './decision-cache.ts';
import type { LoadedPolicySource, PolicyProvenance } from './policy-source.ts';
import type { PolicyInstance, PolicyModule } from './wasm.ts';

export interface EngineStats {
  orgs: number;
  rebuilds: number;
  patches: number;
  wasmBytes: number;
  /** authorize() answers kept now, and how many were answered from them so far. */
  keptDecisions: number;
  keptDecisionHits: number;
  /** filter() answers given from kept ones so far. */
  keptFilterHits: number;
}

/** Told of every authorize(): its outcome (error: the policy failed) and how long it took (src/metrics). */
export interface DecisionObserver {
  decision(outcome: 'allow' | 'deny' | 'error', seconds: number): void;
}

const unobserved: DecisionObserver = { decision() {} };

export interface EngineOptions extends DocumentOptions {
  /** How many authorize() answers are kept over every org (MAX_KEPT_DECISIONS); tests set fewer. */
  maxKeptDecisions?: number;
  /** What the policy module is and where it came from (health, metrics, the decision log); unknown when not said. */
  provenance?: PolicyProvenance;
}

const UNKNOWN_PROVENANCE: PolicyProvenance = { source: 'build', file: '', revision: null, signer: null, opaVersion: null };

export class AuthzEngine implements PolicyChangeListener {
  private documents: OrgDocuments;
  private readonly counters = { keptDecisionHits: 0, keptFilterHits: 0 };
  /** An instance with no data document, for the entry points that read only their input. */
  private inputOnly: Promise<PolicyInstance> | null = null;
  /** The answers kept: authorize()'s by decisionKey, filter()'s by filterKey, permissions()'s by permissionsKey, activeOrg()'s by activeOrgKey. */
  private kept: ReturnType<typeof answerCaches>;
  private runningProvenance: PolicyProvenance;

  constructor(
    private readonly db: Knex,
    private policy: PolicyModule,
    private readonly options: EngineOptions,
    private readonly logger: Logger,
    private readonly observer: DecisionObserver = unobserved,
    private readonly decisionLog: DecisionLog | null = null,
  ) {
    this.kept = answerCaches(options.maxKeptDecisions);
    this.documents = new OrgDocuments(db, policy, options, logger);
    this.runningProvenance = options.provenance ?? UNKNOWN_PROVENANCE;
    if (options.provenance) this.decisionLog?.useRevision(options.provenance.revision);
  }

  /** The running policy's source, revision and signer. */
  get provenance(): PolicyProvenance {
    return this.runningProvenance;
  }

  /**
   * Swaps in another policy module: the next decision is evaluated by it. Its org documents are
   * loaded afresh into its own instances and it starts with no kept answers, so no answer of the
   * replaced policy is given again; requests already evaluating finish with the replaced one.
   */
  usePolicy(loaded: LoadedPolicySource): void {
    const polling = this.documents.polling;
    this.documents.stopChangePoll();
    this.policy = loaded.module;
    this.documents = new OrgDocuments(this.db, loaded.module, this.options, this.logger);
    this.kept = answerCaches(this.options.maxKeptDecisions);
    this.inputOnly = null;
    this.runningProvenance = loaded.provenance;
    this.decisionLog?.useRevision(loaded.provenance.revision);
    if (polling) this.documents.startChangePoll(polling);
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
   * The data document the org's decisions are evaluated against, as of now: built from the
   * database the way the loaded copy is (which the engine keeps equal to it after every commit).
   */
  async document(orgId: string): Promise<OrgDocument> {
    return buildOrgDocument(this.db, orgId, this.options);
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

  /** Which label rules apply to a read of a connector (authz/label_rules); `denied` when the policy fails. */
  async labelRules(input: LabelRulesInput): Promise<LabelRulesAnswer> {
    try {
      const org = await this.documents.ready(input.org_id);
      const result = org.instance.evaluate('authz/label_rules', { subject: subjectCopy(input.subject), org_id: input.org_id, resource: input.resource }) as
        LabelRulesAnswer | undefined;
      const wellFormed = result && ['none', 'bypass', 'applied', 'denied'].includes(result.mode) && Array.isArray(result.selectors);
      if (!wellFormed) throw new Error('policy returned no label-rules answer');
      return result;
    } catch (err) {
      this.failClosed(err);
      return { mode: 'denied', selectors: [] };
    }
  }

  writesPolicyData(write: Write): boolean {
    return writesPolicyData(write);
  }

  unrecordedWrite(tables: readonly string[]): void {
    const message = `a transaction wrote ${tables.join(', ')} without naming a policy change`;
    // Test mode fails the transaction, so the suite finds the write; production rebuilds every document.
    if (this.options.verifyDocuments) throw new Error(message);
    this.logger.error({ tables }, `${message}; every policy document is rebuilt`);
  }

  /** A local commit appended to the change log: the next answer of each org it touched waits for its document to reach the new head. */
  async committed(heads: ReadonlyMap<string, number>): Promise<void> {
    this.documents.wantHeads(heads);
    await this.checkDocuments();
  }

  /** Test mode: every loaded document equals a fresh build, else this throws naming where they differ. */
  async checkDocuments(): Promise<void> {
    if (this.options.verifyDocuments) await checkLoadedDocuments(this.db, this.documents, this.options);
  }

  /** Polls the change log's heads for the changes other instances commit; they show within `intervalMs`. */
  startChangePoll(intervalMs: number): void {
    this.documents.startChangePoll(intervalMs);
  }

  stopChangePoll(): void {
    this.documents.stopChangePoll();
  }

  /** Reads the change log's heads now (what the poll does); tests and benchmarks of another instance call it. */
  pollChanges(): Promise<void> {
    return this.documents.pollChanges();
  }

  /** Compacts the org's document now, as a patched one is when its leftovers grow (tests force it). */
  compactNow(orgId: string | null): Promise<void> {
    return this.documents.compactNow(orgId);
  }

  /** For the readiness check: the policy instantiates and holds a current server-level document. */
  async isLoaded(): Promise<boolean> {
    try {
      await this.documents.ready(null);
      return true;
    } catch (err) {
      this.logger.warn({ err }, 'policy not loaded');
      return false;
    }
  }

  /** Sends the decision log entries still waiting (DECISION_LOG=http), at shutdown. */
  async closeDecisionLog(): Promise<void> {
    await this.decisionLog?.close();
  }

  stats(): EngineStats {
    let wasmBytes = 0;
    for (const org of this.documents.orgs.values()) wasmBytes += org.instance.memoryBytes;
    return { orgs: this.documents.orgs.size, ...this.documents.counters, ...this.counters, wasmBytes, keptDecisions: this.kept.decisions.size };
  }

  private failClosed(err: unknown): Decision {
    // An unreachable database is no denial: the request fails as a whole (503) and may be retried.
    if (isDatabaseUnavailable(err)) throw err;
    this.logger.error({ err }, 'policy evaluation failed; denying');
    return { allow: false, reasons: [{ kind: 'error' }] };
  }
}
