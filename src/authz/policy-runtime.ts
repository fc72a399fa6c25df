/**
 * What keeps the policy answering from current data: the compiled module (swapped by a reload),
 * the org documents at the change log's heads (src/authz/documents.ts), the answers kept under
 * their seqs (src/authz/decision-cache.ts), and the plumbing a commit, the poll and readiness
 * call. The questions asked of the policy are AuthzEngine's (src/authz/engine.ts).
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/errors.ts';
import type { PolicyChangeListener } from '../db/transaction.ts';
import type { Write } from '../db/write-watch.ts';
import { answerCaches } from './decision-cache.ts';
import type { DecisionLog } from './decision-log.ts';
import { buildOrgDocument, writesPolicyData } from './document.ts';
import { OrgDocuments, type DocumentOptions } from './documents.ts';
import { checkLoadedDocuments } from './drift-check.ts';
import type { LoadedPolicySource, PolicyProvenance } from './policy-source.ts';
import type { Decision, OrgDocument } from './types.ts';
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

export interface EngineOptions extends DocumentOptions {
  /** How many authorize() answers are kept over every org (MAX_KEPT_DECISIONS); tests set fewer. */
  maxKeptDecisions?: number;
  /** What the policy module is and where it came from (health, metrics, the decision log); unknown when not said. */
  provenance?: PolicyProvenance;
}

const UNKNOWN_PROVENANCE: PolicyProvenance = { source: 'build', file: '', revision: null, signer: null, opaVersion: null };

export abstract class PolicyRuntime implements PolicyChangeListener {
  protected documents: OrgDocuments;
  protected readonly counters = { keptDecisionHits: 0, keptFilterHits: 0 };
  /** An instance with no data document, for the entry points that read only their input. */
  protected inputOnly: Promise<PolicyInstance> | null = null;
  /** The answers kept: authorize()'s by decisionKey, filter()'s by filterKey, permissions()'s by permissionsKey, activeOrg()'s by activeOrgKey. */
  protected kept: ReturnType<typeof answerCaches>;
  private runningProvenance: PolicyProvenance;

  constructor(
    protected readonly db: Knex,
    protected policy: PolicyModule,
    protected readonly options: EngineOptions,
    protected readonly logger: Logger,
    protected readonly decisionLog: DecisionLog | null,
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

  /** A fresh instance of the build this engine evaluates, holding no document: policy-diff compares a candidate with it. */
  instantiatePolicy(): Promise<PolicyInstance> {
    return this.policy.instantiate();
  }

  /**
   * The data document the org's decisions are evaluated against, as of now: built from the
   * database the way the loaded copy is (which the engine keeps equal to it after every commit).
   */
  async document(orgId: string | null): Promise<OrgDocument> {
    return buildOrgDocument(this.db, orgId, this.options);
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

  protected failClosed(err: unknown): Decision {
    // An unreachable database is no denial: the request fails as a whole (503) and may be retried.
    if (isDatabaseUnavailable(err)) throw err;
    this.logger.error({ err }, 'policy evaluation failed; denying');
    return { allow: false, reasons: [{ kind: 'error' }] };
  }
}
