/**
 * The policy engine: the only place permissions are evaluated. It holds one wasm instance per
 * org loaded with that org's data document at a known seq of the policy change log, and brings
 * it to the log's head before answering whenever a commit (this instance's, at once; another
 * instance's, by the poll) moved the head: by patching the fragments the changes name, or by
 * rebuilding. All work on one org's document runs one step at a time, so no answer is ever given
 * from a document older than a head this instance has seen. It fails closed on any error.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { GLOBAL_STREAM, prunePolicyChanges, readPolicyChanges, readPolicyHeads, type PolicyChange, type PolicyFragment } from '../db/policy-changes.ts';
import type { PolicyChangeListener } from '../db/transaction.ts';
import type { Write } from '../db/write-watch.ts';
import type { DecisionLog } from './decision-log.ts';
import { buildOrgDocument, loadFragments, writesPolicyData, type DocumentSettings } from './document.ts';
import { activeOrgKey, activeOrgPolicyInput, filterKey, filterPolicyInput, policyInput, subjectCopy, subjectKey } from './input-key.ts';
import type { ActiveOrgInput, AuthzInput, Decision, FilterInput, OrgDocument, PermissionMap, Subject } from './types.ts';
import { KeptDecisions } from './kept-decisions.ts';
import type { PolicyInstance, PolicyModule } from './wasm.ts';
import { LruMap } from '../memo.ts';

/** Key of the server-level document (global roles only), used when org_id is null. */
const SERVER_KEY = '';
/**
 * More changes than this behind the head, or more fragments in them, are rebuilt instead. A batch costs a few reads whatever
 * its size and then one patch per place (a bulk replacement of 500 grants at org scale S: 1,006
 * patches, 11 ms of reads and 16 ms of patching, where a rebuild takes 600 ms); the bound keeps
 * the reads' id lists well inside SQLite's 32,766 parameters.
 */
const MAX_PATCH_BATCH = 10_000;
/** Patches leave replaced values behind; past this (or half the document) the document is rebuilt in the background. */
const COMPACT_AFTER_BYTES = 16 * 1024 * 1024;

const encoder = new TextEncoder();

/** A document loaded into a wasm instance, at a seq of the org's stream and of the global one. */
interface LoadedDocument {
  instance: PolicyInstance;
  seq: number;
  globalSeq: number;
  documentBytes: number;
  /** With verifyDocuments: the loaded document as a plain value, rebuilt and patched alongside the wasm copy. */
  mirror: Record<string, unknown> | null;
}

interface OrgPolicy extends LoadedDocument {
  /** When it was last asked, in engine ticks: the least recent goes first when too many are loaded. */
  lastUsed: number;
  /** The newest heads this instance knows of: the document answers only once it has reached them. */
  wantedSeq: number;
  wantedGlobalSeq: number;
  needsRebuild: boolean;
  /** The one step of work under way on this org's document; every other waits for it. */
  refreshing: Promise<void> | null;
  /** A document compacted in the background, swapped in (and brought to the heads) by the next step. */
  compacted: LoadedDocument | null;
  /**
   * Answers given against the document as loaded: decisions in the engine's kept decisions under
   * this generation, permission maps by subject (subjectKey). The policy reads only its input
   * and this document (no clock, nothing else), so an answer changes only when the document does,
   * and every setData or patch forgets both (forgetAnswers).
   */
  generation: number;
  permissions: LruMap<string, Readonly<PermissionMap>>;
}

/**
 * At most this many permission maps are kept per org (and active-org answers in all), the least
 * recently asked dropped first: with AUTHZ_MAX_LOADED_ORGS orgs loaded (256 by default), it bounds
 * what those caches may hold.
 */
const MAX_CACHED_ANSWERS = 512;
/**
 * How many authorize() answers are kept, over every org: the least recently asked goes first.
 * Traffic repeats a working set of questions (a page's checks, a user's dashboards), and a kept
 * answer costs a map lookup instead of an evaluation. About 300 bytes each (its entry and key,
 * src/authz/kept-decisions.ts; a deny keeps its reasons too): 10 MiB or a little more at the bound.
 */
const MAX_KEPT_DECISIONS = 32_768;
/**
 * How many filter() answers are kept, over every org. A list is evaluated item by item, 2.5 to 4
 * µs each (4 ms for the 1,000 teams of an org at scale S), and the same caller asks for the same
 * list again as they page through it or come back to it. Each answer holds an index per allowed
 * item: at most 80 KiB for a list of 10,000.
 */
const MAX_KEPT_FILTERS = 256;
/** An input longer than this (a role's delegated permissions, a chat context, an odd id) is evaluated every time rather than kept. */
const MAX_CACHED_INPUT_CHARS = 2048;

function forgetAnswers(org: OrgPolicy): void {
  org.generation++;
  org.permissions.clear();
}

/** An answer, right while its org's document is at the generation it was given under. */
interface Kept<T> {
  org: OrgPolicy;
  generation: number;
  answer: T;
}

/** A kept answer still right for `org` as loaded now, or undefined. */
function current<T>(kept: Kept<T> | undefined, org: OrgPolicy): T | undefined {
  return kept && kept.org === org && kept.generation === org.generation ? kept.answer : undefined;
}

/**
 * What authorize() answers when the policy allows (authz/enforce's true): the grants behind an allow are
 * not worked out on the enforcement path. explain() and, when it is on, the decision log get
 * them (authz/decision).
 */
const ALLOWED: Readonly<Decision> = Object.freeze({ allow: true, reasons: Object.freeze([]) as unknown as string[] });

/** A decision shared by the requests that ask the same again: frozen, so none can change another's. */
function frozenDecision(decision: Decision): Readonly<Decision> {
  Object.freeze(decision.reasons);
  return Object.freeze(decision);
}

/** A permission map shared by the requests that ask it again: frozen, so none of them can change another's answer. */
function frozen(map: PermissionMap): Readonly<PermissionMap> {
  for (const scopes of Object.values(map)) Object.freeze(scopes);
  return Object.freeze(map);
}

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

export interface EngineOptions extends DocumentSettings {
  /** How many org documents stay loaded; past it the least recently used one is dropped. */
  maxLoadedOrgs: number;
  /** How many authorize() answers are kept over every org (MAX_KEPT_DECISIONS); tests set fewer. */
  maxKeptDecisions?: number;
  /**
   * Test mode: after every committed transaction each loaded document must equal a fresh build
   * from SQL, or the transaction's caller gets an error naming where they differ. A write that
   * names the wrong fragment (or none) would otherwise leave a stale allow that nothing repairs.
   */
  verifyDocuments?: boolean;
}

/** How often a drifted document is re-checked before it counts: a commit's notice may still be on its way. */
const DRIFT_CHECKS = 3;
const DRIFT_RECHECK_MS = 20;
/** How many loaded documents test mode checks at once after a commit. */
const DRIFT_CHECKS_AT_ONCE = 4;

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The document as canonical JSON: object keys sorted, lists of strings sorted (the policy reads
 * them as sets: a member's roles and teams come in whatever order the query returned), undefined
 * left out.
 */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (Array.isArray(v)) return v.every((item) => typeof item === 'string') ? [...(v as string[])].sort(byText) : v;
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([a], [b]) => byText(a, b)));
    return v;
  });
}

/** The first top-level section and key where two documents differ, for the drift error. */
function firstDifference(loaded: Record<string, unknown>, fresh: Record<string, unknown>): string {
  for (const section of new Set([...Object.keys(loaded), ...Object.keys(fresh)])) {
    const [a, b] = [loaded[section], fresh[section]];
    if (canonical(a) === canonical(b)) continue;
    if (a && b && typeof a === 'object' && typeof b === 'object') {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
        const [x, y] = [(a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]];
        if (canonical(x) !== canonical(y)) return `${section}.${key}: loaded ${canonical(x)}, in the database ${canonical(y)}`;
      }
    }
    return `${section}: loaded ${canonical(a)}, in the database ${canonical(b)}`;
  }
  return 'no difference';
}

/** Sets (or, with undefined, removes) the value at path, as PolicyInstance.patch does in wasm. */
function patchMirror(mirror: Record<string, unknown>, path: string[], value: unknown): void {
  let node = mirror;
  for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
}

/** Changes older than this are pruned from the log (each stream's newest is always kept). */
const CHANGE_RETENTION_MS = 60 * 60 * 1000;
const PRUNE_EVERY_MS = 5 * 60 * 1000;

function behind(org: OrgPolicy): boolean {
  return org.needsRebuild || org.compacted !== null || org.seq < org.wantedSeq || org.globalSeq < org.wantedGlobalSeq;
}

export class AuthzEngine implements PolicyChangeListener {
  private readonly orgs = new Map<string, OrgPolicy>();
  private readonly compacting = new WeakSet<OrgPolicy>();
  private lastPruned = 0;
  private readonly counters = { rebuilds: 0, patches: 0, keptDecisionHits: 0, keptFilterHits: 0 };
  private poller: NodeJS.Timeout | null = null;
  private ticks = 0;
  /** An instance with no data document, for the entry points that read only their input. */
  private inputOnly: Promise<PolicyInstance> | null = null;
  /** activeOrg() answers by activeOrgKey. */
  private readonly activeOrgAnswers = new LruMap<string, Readonly<Decision>>(MAX_CACHED_ANSWERS);
  /** authorize() answers by their input, which names the org (org_id). */
  private readonly keptDecisions: KeptDecisions<Kept<Readonly<Decision>>>;
  /** filter() answers by filterKey, which names the org. */
  private readonly keptFilters = new LruMap<string, Kept<readonly number[]>>(MAX_KEPT_FILTERS);

  constructor(
    private readonly db: Knex,
    private readonly policy: PolicyModule,
    private readonly options: EngineOptions,
    private readonly logger: Logger,
    private readonly observer: DecisionObserver = unobserved,
    private readonly decisionLog: DecisionLog | null = null,
  ) {
    this.keptDecisions = new KeptDecisions(options.maxKeptDecisions ?? MAX_KEPT_DECISIONS, MAX_CACHED_INPUT_CHARS);
  }

  /** The decision that lets a request act or refuses it: observed (metrics) and, when on, written to the decision log. */
  async authorize(input: AuthzInput): Promise<Decision> {
    const started = performance.now();
    let outcome: 'allow' | 'deny' | 'error' = 'error';
    try {
      // ready() first: it applies every change notified so far, moving the org to a new generation if the document changed.
      // Awaited only when it has work to do: an await of a loaded org would still cost a turn of the microtask queue.
      const ready = this.ready(input.org_id);
      const org = ready instanceof Promise ? await ready : ready;
      const evaluated = this.decisionLog ? performance.now() : 0;
      const result = this.enforce(org, input);
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
      const org = await this.ready(input.org_id);
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
  private enforce(org: OrgPolicy, input: AuthzInput): Readonly<Decision> {
    const kept = current(this.keptDecisions.get(input), org);
    if (kept) {
      this.counters.keptDecisionHits++;
      return kept;
    }
    const json = JSON.stringify(policyInput(input));
    const result = this.decisionLog ? this.decision(org.instance, json) : this.allowedOrRefused(org.instance, json);
    this.keptDecisions.set(input, { org, generation: org.generation, answer: result === ALLOWED ? ALLOWED : frozenDecision(result) });
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
      const kept = this.activeOrgAnswers.get(key);
      if (kept) return kept;
      this.inputOnly ??= this.policy.instantiate();
      const result = (await this.inputOnly).evaluateJson('authz/active_org', JSON.stringify(activeOrgPolicyInput(input))) as Decision | undefined;
      if (!result || typeof result.allow !== 'boolean' || !Array.isArray(result.reasons)) {
        return this.failClosed(new Error('policy returned no active-org decision'));
      }
      if (key.length <= MAX_CACHED_INPUT_CHARS) {
        this.activeOrgAnswers.set(key, frozenDecision(result));
      }
      return result;
    } catch (err) {
      return this.failClosed(err);
    }
  }

  /** What `subject` holds in the org, `{action: [scope]}`; frozen: a repeat of the same question gets the same object. */
  async permissions(subject: Subject, orgId: string | null): Promise<Readonly<PermissionMap>> {
    try {
      // ready() first: it applies every change notified so far, emptying the cache if the document changed.
      const org = await this.ready(orgId);
      const key = subjectKey(subject);
      const cached = org.permissions.get(key);
      if (cached) return cached;
      const result = org.instance.evaluate('authz/permissions', { subject: subjectCopy(subject), org_id: orgId });
      if (!result || typeof result !== 'object') return {};
      // Sorting is the caller's job: sort() in wasm is quadratic on large scope sets.
      const sorted: PermissionMap = {};
      for (const action of Object.keys(result).sort()) sorted[action] = [...(result as PermissionMap)[action]!].sort();
      org.permissions.set(key, frozen(sorted));
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
      // ready() first: it applies every change notified so far, moving the org to a new generation if the document changed.
      const org = await this.ready(input.org_id);
      const key = filterKey(input);
      const kept = current(this.keptFilters.get(key), org);
      if (kept) {
        this.counters.keptFilterHits++;
        return [...kept];
      }
      const result = org.instance.evaluate('authz/filter', filterPolicyInput(input));
      const indexes = Array.isArray(result) ? (result as number[]) : [];
      this.keptFilters.set(key, { org, generation: org.generation, answer: Object.freeze([...indexes]) });
      return indexes;
    } catch (err) {
      this.failClosed(err);
      return [];
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
    this.wantHeads(heads);
    await this.verifyAfterCommit();
  }

  private wantHeads(heads: ReadonlyMap<string, number>): void {
    const globalSeq = heads.get(GLOBAL_STREAM);
    for (const [key, org] of this.orgs) {
      const seq = key === SERVER_KEY ? undefined : heads.get(key);
      if (seq !== undefined && seq > org.wantedSeq) org.wantedSeq = seq;
      if (globalSeq !== undefined && globalSeq > org.wantedGlobalSeq) org.wantedGlobalSeq = globalSeq;
    }
  }

  /**
   * Test mode (verifyDocuments): checks every loaded document against a fresh build; throws on
   * drift. A few orgs at a time: a suite loads dozens, and one after another each commit would
   * wait for all their builds' round trips in turn.
   */
  async verifyAfterCommit(): Promise<void> {
    if (!this.options.verifyDocuments) return;
    const keys = [...this.orgs.keys()];
    const checkNext = async (): Promise<void> => {
      for (let key = keys.pop(); key !== undefined; key = keys.pop()) await this.verifyDocument(key === SERVER_KEY ? null : key);
    };
    const checkers = await Promise.allSettled(Array.from({ length: DRIFT_CHECKS_AT_ONCE }, checkNext));
    const failed = checkers.find((checker) => checker.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async verifyDocument(orgId: string | null): Promise<void> {
    for (let check = 1; ; check++) {
      const org = await this.ready(orgId);
      const heads = await this.readHeads(orgId);
      const atHeads = () => org.seq === heads.seq && org.globalSeq === heads.globalSeq && !behind(org) && !org.refreshing;
      // A change made elsewhere (another instance, a commit still on its way here) is the poll's to bring.
      if (!atHeads() || !org.mirror) return;
      const fresh = (await buildOrgDocument(this.db, orgId, this.options)) as unknown as Record<string, unknown>;
      const after = await this.readHeads(orgId);
      if (after.seq !== heads.seq || after.globalSeq !== heads.globalSeq || !atHeads()) return;
      if (canonical(org.mirror) === canonical(fresh)) return;
      if (check >= DRIFT_CHECKS) throw new Error(`policy document drift in org ${orgId ?? '(server)'}: ${firstDifference(org.mirror, fresh)}`);
      await new Promise((resolve) => setTimeout(resolve, DRIFT_RECHECK_MS));
    }
  }

  /** Polls the change log's heads for the changes other instances commit; they show within `intervalMs`. */
  startChangePoll(intervalMs: number): void {
    this.stopChangePoll();
    this.poller = setInterval(() => {
      this.pollChanges().catch((err) => this.logger.warn({ err }, 'policy change poll failed'));
    }, intervalMs);
    this.poller.unref();
  }

  stopChangePoll(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  /** Reads the heads of every loaded org's stream and the global one; the orgs behind them catch up (by patching) before their next answer. */
  async pollChanges(): Promise<void> {
    if (this.orgs.size === 0) return;
    const streams = [...this.orgs.keys()].filter((key) => key !== SERVER_KEY);
    this.wantHeads(await readPolicyHeads(this.db, [...streams, GLOBAL_STREAM]));
    if (Date.now() - this.lastPruned >= PRUNE_EVERY_MS) {
      this.lastPruned = Date.now();
      await prunePolicyChanges(this.db, Date.now() - CHANGE_RETENTION_MS);
    }
  }

  /** For the readiness check: the policy instantiates and holds a current server-level document. */
  async isLoaded(): Promise<boolean> {
    try {
      await this.ready(null);
      return true;
    } catch (err) {
      this.logger.warn({ err }, 'policy not loaded');
      return false;
    }
  }

  stats(): EngineStats {
    let wasmBytes = 0;
    for (const org of this.orgs.values()) wasmBytes += org.instance.memoryBytes;
    return { orgs: this.orgs.size, ...this.counters, wasmBytes, keptDecisions: this.keptDecisions.size };
  }

  /**
   * The org's instance with a document at least as new as every change notice so far: at once
   * when it is loaded and has applied them all (the common case, which then costs a request no
   * wait of its own), else once it has been brought there.
   */
  private ready(orgId: string | null): OrgPolicy | Promise<OrgPolicy> {
    const org = this.orgs.get(orgId ?? SERVER_KEY);
    if (!org || org.refreshing || behind(org)) return this.bringUpToDate(orgId);
    org.lastUsed = ++this.ticks;
    return org;
  }

  private async bringUpToDate(orgId: string | null): Promise<OrgPolicy> {
    const key = orgId ?? SERVER_KEY;
    let org = this.orgs.get(key);
    if (!org) {
      // At the bound, the least recently used org gives up its instance: a cold org then costs
      // its document, not a new wasm instance too (setData replaces everything in it).
      const recycled = this.evictLeastRecentlyUsed();
      const instance = recycled ?? (await this.policy.instantiate());
      org = this.orgs.get(key);
      if (!org) {
        // others may have filled the map while this call waited for its instance
        if (!recycled) this.evictLeastRecentlyUsed();
        org = {
          instance,
          seq: 0,
          globalSeq: 0,
          documentBytes: 0,
          mirror: null,
          lastUsed: 0,
          wantedSeq: 0,
          wantedGlobalSeq: 0,
          needsRebuild: true,
          refreshing: null,
          compacted: null,
          generation: 0,
          permissions: new LruMap(MAX_CACHED_ANSWERS),
        };
        this.orgs.set(key, org);
      }
    }
    // A step under way may have started before the newest head was known: wait, then look again.
    while (org.refreshing || behind(org)) {
      const current = org;
      current.refreshing ??= this.refresh(orgId, current).finally(() => {
        current.refreshing = null;
      });
      await current.refreshing;
    }
    org.lastUsed = ++this.ticks;
    return org;
  }

  /**
   * Makes room for one more org document when the bound is reached: an idle org is rebuilt from
   * SQL when asked again. Returns the evicted org's instance, free for another org.
   */
  private evictLeastRecentlyUsed(): PolicyInstance | null {
    if (this.orgs.size < this.options.maxLoadedOrgs) return null;
    let oldest: [string, OrgPolicy] | null = null;
    for (const entry of this.orgs) {
      if (!entry[1].refreshing && (!oldest || entry[1].lastUsed < oldest[1].lastUsed)) oldest = entry;
    }
    if (!oldest) return null;
    this.orgs.delete(oldest[0]);
    // its kept decisions no longer match (another OrgPolicy answers for the org now) and age out of
    // keptDecisions; until they do, they hold this object, so it lets go of its permission maps
    forgetAnswers(oldest[1]);
    return oldest[1].instance;
  }

  /**
   * One step of work on the org's document, run alone: swap in a compacted document, then apply
   * the changes after the document's seq (or rebuild when they ask for it, are too many, or were
   * pruned), reaching at least the heads wanted when the step began.
   */
  private async refresh(orgId: string | null, org: OrgPolicy): Promise<void> {
    if (org.compacted) {
      Object.assign(org, org.compacted);
      org.compacted = null;
      forgetAnswers(org);
    }
    if (org.needsRebuild) {
      org.needsRebuild = false;
      try {
        Object.assign(org, await this.load(orgId, org.instance));
      } catch (err) {
        org.needsRebuild = true;
        throw err;
      }
      forgetAnswers(org);
      this.counters.rebuilds++;
      return;
    }
    const changes = [
      ...(orgId ? await readPolicyChanges(this.db, orgId, org.seq, MAX_PATCH_BATCH + 1) : []),
      ...(await readPolicyChanges(this.db, GLOBAL_STREAM, org.globalSeq, MAX_PATCH_BATCH + 1)),
    ];
    const fragments = this.patchable(org, changes);
    if (!fragments) {
      org.needsRebuild = true;
      return;
    }
    const patches = await loadFragments(this.db, orgId, fragments);
    if (patches.length > 0) forgetAnswers(org);
    for (const patch of patches) {
      org.instance.patch(patch.path, patch.value);
      if (org.mirror) patchMirror(org.mirror, patch.path, patch.value);
    }
    this.counters.patches += patches.length;
    for (const change of changes) {
      if (change.stream === GLOBAL_STREAM) org.globalSeq = change.seq;
      else org.seq = change.seq;
    }
    // Heads this instance saw are committed, and what is committed is in the log: reading up to them is reaching them.
    org.wantedSeq = Math.max(org.wantedSeq, org.seq);
    org.wantedGlobalSeq = Math.max(org.wantedGlobalSeq, org.globalSeq);
    if (org.seq < org.wantedSeq || org.globalSeq < org.wantedGlobalSeq) org.needsRebuild = true;
    else if (org.instance.bytesLeftByPatches > Math.max(COMPACT_AFTER_BYTES, org.documentBytes / 2)) void this.compact(orgId, org);
  }

  /** The fragments of `changes` when they can be patched: each stream continues the document's seq, none asks for everything, and they are few enough. */
  private patchable(org: OrgPolicy, changes: readonly PolicyChange[]): PolicyFragment[] | null {
    const fragments: PolicyFragment[] = [];
    const next = { org: org.seq + 1, global: org.globalSeq + 1 };
    for (const change of changes) {
      const stream = change.stream === GLOBAL_STREAM ? 'global' : 'org';
      // A gap: the changes after the document's seq were pruned.
      if (change.seq !== next[stream]) return null;
      next[stream]++;
      if (change.change === 'all') return null;
      fragments.push(...change.change);
      if (fragments.length > MAX_PATCH_BATCH) return null;
    }
    return fragments;
  }

  /** A fresh document of the org in `instance`, at the heads read before the build (changes committed during it are patched after). */
  private async load(orgId: string | null, instance: PolicyInstance): Promise<LoadedDocument> {
    const heads = await this.readHeads(orgId);
    const document = await buildOrgDocument(this.db, orgId, this.options);
    const json = encoder.encode(JSON.stringify(document));
    instance.setData(json.buffer as ArrayBuffer);
    const mirror = this.options.verifyDocuments ? (JSON.parse(JSON.stringify(document)) as Record<string, unknown>) : null;
    return { instance, seq: heads.seq, globalSeq: heads.globalSeq, documentBytes: json.byteLength, mirror };
  }

  /**
   * Patches leave replaced values behind: a document is rebuilt into a fresh instance in the
   * background while the patched one keeps answering, and the next step swaps it in and brings
   * it to the heads before it answers anything.
   */
  private async compact(orgId: string | null, org: OrgPolicy): Promise<void> {
    if (org.compacted || this.compacting.has(org)) return;
    this.compacting.add(org);
    try {
      const compacted = await this.load(orgId, await this.policy.instantiate());
      if (this.orgs.get(orgId ?? SERVER_KEY) !== org) return;
      org.compacted = compacted;
      this.counters.rebuilds++;
    } catch (err) {
      this.logger.warn({ err, orgId }, 'policy document compaction failed; the patched document stays');
    } finally {
      this.compacting.delete(org);
    }
  }

  /** Compacts the org's document now (tests and the interleaving check force it). */
  async compactNow(orgId: string | null): Promise<void> {
    const org = await this.ready(orgId);
    await this.compact(orgId, org);
  }

  private async readHeads(orgId: string | null): Promise<{ seq: number; globalSeq: number }> {
    const heads = await readPolicyHeads(this.db, orgId ? [orgId, GLOBAL_STREAM] : [GLOBAL_STREAM]);
    return { seq: orgId ? heads.get(orgId)! : 0, globalSeq: heads.get(GLOBAL_STREAM)! };
  }

  private failClosed(err: unknown): Decision {
    // An unreachable database is no denial: the request fails as a whole (503) and may be retried.
    if (isDatabaseUnavailable(err)) throw err;
    this.logger.error({ err }, 'policy evaluation failed; denying');
    return { allow: false, reasons: ['policy evaluation failed'] };
  }
}
