/**
 * The policy engine: the only place permissions are evaluated. It holds one wasm instance per
 * org loaded with that org's data document, keeps it current after committed changes (this
 * instance: at once, by patching the fragments a change names or rebuilding; other instances:
 * via the revision poll), and fails closed on any error.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../db/errors.ts';
import { ALL_ORGS, type PolicyChangeListener } from '../db/transaction.ts';
import type { DecisionLog } from './decision-log.ts';
import { buildOrgDocument, loadFragments, readPolicyRevisions, type DocumentSettings } from './document.ts';
import type { OrgChange, PolicyFragment } from './fragments.ts';
import { activeOrgKey, activeOrgPolicyInput, filterKey, filterPolicyInput, policyInput, subjectCopy, subjectKey } from './input-key.ts';
import type { ActiveOrgInput, AuthzInput, Decision, FilterInput, OrgDocument, PermissionMap, Subject } from './types.ts';
import { KeptDecisions } from './kept-decisions.ts';
import type { PolicyInstance, PolicyModule } from './wasm.ts';
import { LruMap } from '../memo.ts';

/** Key of the server-level document (global roles only), used when org_id is null. */
const SERVER_KEY = '';
/**
 * More fragments than this in one batch are rebuilt instead. A batch costs a few reads whatever
 * its size and then one patch per place (a bulk replacement of 500 grants at org scale S: 1,006
 * patches, 11 ms of reads and 16 ms of patching, where a rebuild takes 600 ms); the bound keeps
 * the reads' id lists well inside SQLite's 32,766 parameters.
 */
const MAX_PATCH_BATCH = 10_000;
/** Patches leave replaced values behind; past this (or half the document) the document is rebuilt in the background. */
const COMPACT_AFTER_BYTES = 16 * 1024 * 1024;

const encoder = new TextEncoder();

interface OrgPolicy {
  instance: PolicyInstance;
  /** When it was last asked, in engine ticks: the least recent goes first when too many are loaded. */
  lastUsed: number;
  needsRebuild: boolean;
  pending: PolicyFragment[];
  /** The org's policy revision the document is at: every commit up to it is in the document. */
  revision: number;
  /**
   * The revisions this instance's own commits left the org at, above `revision`. Patching their
   * fragments brings the document up to a later revision only when every commit in between is one
   * of them: another instance's commit among them is known by its revision alone, and takes a
   * rebuild.
   */
  ownRevisions: Set<number>;
  documentBytes: number;
  refreshing: Promise<void> | null;
  /** While a background rebuild reads the DB: the fragments patched meanwhile, to re-apply after it. */
  replay: PolicyFragment[] | null;
  /** With verifyDocuments: the loaded document as a plain value, rebuilt and patched alongside the wasm copy. */
  mirror: Record<string, unknown> | null;
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

/**
 * Moves the org's revision up to `current` over the revisions of this instance's own commits,
 * whose fragments are applied or pending; false when a revision in between is another
 * instance's (the document then lacks a change no fragment named here).
 */
function advanceOverOwnCommits(org: OrgPolicy, current: number): boolean {
  let revision = org.revision;
  while (revision < current && org.ownRevisions.has(revision + 1)) revision++;
  org.revision = revision;
  for (const own of org.ownRevisions) if (own <= revision) org.ownRevisions.delete(own);
  return revision >= current;
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

export class AuthzEngine implements PolicyChangeListener {
  private readonly orgs = new Map<string, OrgPolicy>();
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

  policyDataChanged(changes: ReadonlyMap<string, OrgChange>, revisions: ReadonlyMap<string, number>): void {
    const everyOrg = changes.get(ALL_ORGS);
    for (const [key, org] of this.orgs) {
      for (const change of [changes.get(key), everyOrg]) {
        if (change === 'all') org.needsRebuild = true;
        else if (change) org.pending.push(...change);
      }
      const revision = revisions.get(key);
      if (revision !== undefined && revision > org.revision) org.ownRevisions.add(revision);
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
      const revision = await this.readRevision(orgId);
      // A change made elsewhere (another instance, a commit whose notice is on its way) is the revision poll's to bring.
      if (revision !== org.revision || !org.mirror) return;
      const fresh = (await buildOrgDocument(this.db, orgId, this.options)) as unknown as Record<string, unknown>;
      if ((await this.readRevision(orgId)) !== revision || org.pending.length > 0 || org.needsRebuild) return;
      if (canonical(org.mirror) === canonical(fresh)) return;
      if (check >= DRIFT_CHECKS) throw new Error(`policy document drift in org ${orgId ?? '(server)'}: ${firstDifference(org.mirror, fresh)}`);
      await new Promise((resolve) => setTimeout(resolve, DRIFT_RECHECK_MS));
    }
  }

  /** Polls the org revisions written by other instances; changes elsewhere show within `intervalMs`. */
  startRevisionPoll(intervalMs: number): void {
    this.stopRevisionPoll();
    this.poller = setInterval(() => {
      this.pollRevisions().catch((err) => this.logger.warn({ err }, 'policy revision poll failed'));
    }, intervalMs);
    this.poller.unref();
  }

  stopRevisionPoll(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
  }

  async pollRevisions(): Promise<void> {
    const keys = [...this.orgs.keys()].filter((key) => key !== SERVER_KEY);
    if (keys.length === 0) return;
    const current = await readPolicyRevisions(this.db, keys);
    for (const key of keys) {
      const org = this.orgs.get(key)!;
      // Another instance changed the org: we cannot know which fragments, so rebuild.
      const revision = current.get(key);
      if (revision === undefined || !advanceOverOwnCommits(org, revision)) org.needsRebuild = true;
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
    if (!org || org.refreshing || org.needsRebuild || org.pending.length > 0) return this.bringUpToDate(orgId);
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
          lastUsed: 0,
          needsRebuild: true,
          pending: [],
          revision: -1,
          ownRevisions: new Set(),
          documentBytes: 0,
          refreshing: null,
          replay: null,
          mirror: null,
          generation: 0,
          permissions: new LruMap(MAX_CACHED_ANSWERS),
        };
        this.orgs.set(key, org);
      }
    }
    // A refresh under way counts as a change not yet applied: it took the pending work with it.
    while (org.refreshing || org.needsRebuild || org.pending.length > 0) {
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

  private async refresh(orgId: string | null, org: OrgPolicy): Promise<void> {
    if (org.needsRebuild || org.pending.length > MAX_PATCH_BATCH) {
      org.needsRebuild = false;
      const covered = org.pending.splice(0);
      try {
        await this.rebuild(orgId, org);
      } catch (err) {
        org.needsRebuild = true;
        org.pending.unshift(...covered);
        throw err;
      }
      return;
    }
    const batch = org.pending.splice(0);
    try {
      const revision = await this.readRevision(orgId);
      const patches = await loadFragments(this.db, orgId, batch);
      if (patches.length > 0) forgetAnswers(org);
      for (const patch of patches) {
        org.instance.patch(patch.path, patch.value);
        if (org.mirror) patchMirror(org.mirror, patch.path, patch.value);
      }
      this.counters.patches += patches.length;
      org.replay?.push(...batch);
      // Read before the fragments: a commit of another instance up to it is not in this batch.
      if (!advanceOverOwnCommits(org, revision)) org.needsRebuild = true;
    } catch (err) {
      org.pending.unshift(...batch);
      throw err;
    }
    if (!org.replay && org.instance.bytesLeftByPatches > Math.max(COMPACT_AFTER_BYTES, org.documentBytes / 2)) void this.compact(orgId, org);
  }

  private async rebuild(orgId: string | null, org: OrgPolicy): Promise<void> {
    const revision = await this.readRevision(orgId);
    const document = await buildOrgDocument(this.db, orgId, this.options);
    const json = encoder.encode(JSON.stringify(document));
    org.instance.setData(json.buffer as ArrayBuffer);
    forgetAnswers(org);
    if (this.options.verifyDocuments) org.mirror = JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
    org.documentBytes = json.byteLength;
    org.revision = revision;
    advanceOverOwnCommits(org, revision);
    this.counters.rebuilds++;
  }

  /** Rebuilds in the background while the patched document keeps serving; re-applies what changed meanwhile. */
  private async compact(orgId: string | null, org: OrgPolicy): Promise<void> {
    org.replay = [];
    try {
      await this.rebuild(orgId, org);
      org.pending.unshift(...org.replay);
    } catch (err) {
      this.logger.warn({ err, orgId }, 'policy document compaction failed; the patched document stays');
    } finally {
      org.replay = null;
    }
  }

  private async readRevision(orgId: string | null): Promise<number> {
    if (!orgId) return 0;
    return (await readPolicyRevisions(this.db, [orgId])).get(orgId) ?? 0;
  }

  private failClosed(err: unknown): Decision {
    // An unreachable database is no denial: the request fails as a whole (503) and may be retried.
    if (isDatabaseUnavailable(err)) throw err;
    this.logger.error({ err }, 'policy evaluation failed; denying');
    return { allow: false, reasons: ['policy evaluation failed'] };
  }
}
