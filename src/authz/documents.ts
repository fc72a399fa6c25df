/**
 * The org documents this instance has loaded, each in a wasm instance at a known seq of the
 * policy change log. An org's document is brought to the newest head this instance knows of
 * before it answers (a local commit's heads at once, another instance's by the poll): by patching
 * the fragments the changes name, or by rebuilding. All work on one org's document runs one step
 * at a time, compaction's swap included, so no answer is ever given from a document older than a
 * head this instance has seen.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { GLOBAL_STREAM, prunePolicyChanges, readPolicyChanges, readPolicyHeads, type PolicyChange, type PolicyFragment } from '../db/policy-changes.ts';
import { buildOrgDocument, loadFragments, type DocumentSettings } from './document.ts';
import { patchMirror, behind, type LoadedDocument, type OrgPolicy } from './loaded-document.ts';
import type { PolicyInstance, PolicyModule } from './wasm.ts';

/** Key of the server-level document (global roles only), used when org_id is null. */
export const SERVER_KEY = '';
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

/** Changes older than this are pruned from the log (each stream's newest is always kept). */
const CHANGE_RETENTION_MS = 60 * 60 * 1000;
const PRUNE_EVERY_MS = 5 * 60 * 1000;

export interface DocumentOptions extends DocumentSettings {
  /** How many org documents stay loaded; past it the least recently used one is dropped. */
  maxLoadedOrgs: number;
  /**
   * Test mode: a mirror of each document is kept as a plain value, and after every commit that
   * changed policy data each loaded document must equal a fresh build (src/authz/drift-check.ts).
   */
  verifyDocuments?: boolean;
}

export class OrgDocuments {
  readonly orgs = new Map<string, OrgPolicy>();
  readonly counters = { rebuilds: 0, patches: 0 };
  private readonly compacting = new WeakSet<OrgPolicy>();
  private lastPruned = 0;
  private poller: NodeJS.Timeout | null = null;
  /** The poll's interval while it runs, else null. */
  polling: number | null = null;
  private ticks = 0;

  constructor(
    private readonly db: Knex,
    private readonly policy: PolicyModule,
    private readonly options: DocumentOptions,
    private readonly logger: Logger,
  ) {}

  wantHeads(heads: ReadonlyMap<string, number>): void {
    const globalSeq = heads.get(GLOBAL_STREAM);
    for (const [key, org] of this.orgs) {
      const seq = key === SERVER_KEY ? undefined : heads.get(key);
      if (seq !== undefined && seq > org.wantedSeq) org.wantedSeq = seq;
      if (globalSeq !== undefined && globalSeq > org.wantedGlobalSeq) org.wantedGlobalSeq = globalSeq;
    }
  }

  /** Polls the change log's heads for the changes other instances commit; they show within `intervalMs`. */
  startChangePoll(intervalMs: number): void {
    this.stopChangePoll();
    this.polling = intervalMs;
    this.poller = setInterval(() => {
      this.pollChanges().catch((err) => this.logger.warn({ err }, 'policy change poll failed'));
    }, intervalMs);
    this.poller.unref();
  }

  stopChangePoll(): void {
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    this.polling = null;
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

  /**
   * The org's instance with a document at least as new as every change notice so far: at once
   * when it is loaded and has applied them all (the common case, which then costs a request no
   * wait of its own), else once it has been brought there.
   */
  ready(orgId: string | null): OrgPolicy | Promise<OrgPolicy> {
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
    }
    if (org.needsRebuild) {
      org.needsRebuild = false;
      try {
        Object.assign(org, await this.load(orgId, org.instance));
      } catch (err) {
        org.needsRebuild = true;
        throw err;
      }
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

  async readHeads(orgId: string | null): Promise<{ seq: number; globalSeq: number }> {
    const heads = await readPolicyHeads(this.db, orgId ? [orgId, GLOBAL_STREAM] : [GLOBAL_STREAM]);
    return { seq: orgId ? heads.get(orgId)! : 0, globalSeq: heads.get(GLOBAL_STREAM)! };
  }
}
