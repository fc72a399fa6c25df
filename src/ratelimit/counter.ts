/**
 * The general rate limit's counts, kept in memory per instance and shared through the database in
 * batches (src/ratelimit/store.ts), so that a request costs a map lookup and no query.
 *
 * Each key (a hashed token, user or address) has an entry for the current fixed window: `shared`,
 * the total over every instance as the database last answered it (this instance's flushed counts
 * included), and what this instance counted since (`pending`, and `flushing` while a flush is under
 * way). A request's count is their sum. Every `syncMs` the instance adds each key's pending count
 * to the database, one statement for all the keys counted in that slice, and reads back their
 * totals: what the other instances counted arrives with it.
 *
 * A single instance is exact: the totals it reads back are its own counts. Several instances may
 * together let through more than the limit: the last one to admit a request of a caller saw the
 * others' counts as they were up to two slices before (they flush once a slice, it reads once a
 * slice), so beyond the limit are at most the requests the others admitted for that caller within
 * about two slices. A failed flush keeps its counts on the instance that took them (logged), so
 * each instance still holds the limit on its own while the database is away.
 *
 * Memory is bounded: at most `maxKeys` entries, the least recently used dropped first. A dropped
 * caller that comes back starts from its unflushed count of zero, and its next flush reads its
 * total back: what eviction forgets is at most one slice.
 */
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { addCounts, deleteStaleCounters, windowStartOf, type CountDelta } from './store.ts';

interface Entry {
  key: string;
  windowStart: number;
  /** The total over every instance in this window, as last read from the database. */
  shared: number;
  /** Counted here and in no flush yet. */
  pending: number;
  /** Counted here and in the flush under way. */
  flushing: number;
  /** In the list of entries the next flush sends. */
  dirty: boolean;
}

export interface SharedRateCounterOptions {
  db: Knex;
  clock: { now(): number };
  logger: Logger;
  /** How often the counts are added to the database and the totals read back (RATE_LIMIT_SYNC_MS). */
  syncMs: number;
  /** Most keys kept in memory (RATE_LIMIT_MAX_KEYS). */
  maxKeys: number;
}

export class SharedRateCounter {
  private readonly entries: LRUCache<string, Entry>;
  private dirty: Entry[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** The flushes in order: one at a time, each waiting for the one before. */
  private chain: Promise<void> = Promise.resolve();
  private busy = false;
  private prunedWindow = 0;
  private failing = false;

  constructor(private readonly options: SharedRateCounterOptions) {
    this.entries = new LRUCache<string, Entry>({ max: options.maxKeys });
  }

  /** Starts flushing every `syncMs`. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // a slow flush is not queued behind: the next tick sends what piled up meanwhile
      if (!this.busy) void this.flush();
    }, this.options.syncMs);
    this.timer.unref();
  }

  /** Stops the timer and sends what is counted but not flushed yet (for the other instances). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /** Keys in memory. */
  get size(): number {
    return this.entries.size;
  }

  /** Counts one request of `key` at `now`; returns the requests of `key` counted in the window (every instance's, as known here), this one included, and the window's start. */
  count(key: string, now: number): { count: number; windowStart: number } {
    const windowStart = windowStartOf(now);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { key, windowStart, shared: 0, pending: 0, flushing: 0, dirty: false };
      this.entries.set(key, entry);
    } else if (windowStart > entry.windowStart) {
      // a new window: the old one's counts no longer matter here (a flush under way still sends them)
      entry.windowStart = windowStart;
      entry.shared = 0;
      entry.pending = 0;
      entry.flushing = 0;
    }
    entry.pending += 1;
    if (!entry.dirty) {
      entry.dirty = true;
      this.dirty.push(entry);
    }
    return { count: entry.shared + entry.flushing + entry.pending, windowStart: entry.windowStart };
  }

  /** Adds what was counted since the last flush to the database and reads the totals back; resolves when done (a failure is logged, never thrown). */
  flush(): Promise<void> {
    this.chain = this.chain
      .then(() => this.flushOnce())
      // a bug here must not end the process nor stop the later flushes
      .catch((err: unknown) => this.options.logger.error({ err }, 'rate-limit flush failed'));
    return this.chain;
  }

  private async flushOnce(): Promise<void> {
    this.busy = true;
    try {
      await this.prune();
      const batch = this.dirty;
      this.dirty = [];
      const taken: Array<{ entry: Entry; windowStart: number; hits: number }> = [];
      for (const entry of batch) {
        entry.dirty = false;
        if (entry.pending === 0) continue;
        taken.push({ entry, windowStart: entry.windowStart, hits: entry.pending });
        entry.flushing += entry.pending;
        entry.pending = 0;
      }
      if (taken.length === 0) return;
      let totals: Map<string, { windowStart: number; hits: number }> | null = null;
      try {
        const deltas: CountDelta[] = taken.map(({ entry, windowStart, hits }) => ({ key: entry.key, windowStart, hits }));
        totals = new Map((await addCounts(this.options.db, deltas)).map((total) => [total.key, total]));
        if (this.failing) this.options.logger.info('rate-limit counts shared through the database again');
        this.failing = false;
      } catch (err) {
        if (!this.failing) this.options.logger.warn({ err }, 'could not share rate-limit counts: each instance counts on its own until the database answers');
        this.failing = true;
      }
      for (const { entry, windowStart, hits } of taken) {
        // the entry moved on to a later window meanwhile: what this flush knew is of the old one
        if (entry.windowStart !== windowStart) continue;
        entry.flushing -= hits;
        const total = totals?.get(entry.key);
        // the database's total counts these hits; without one (a failed flush, or a later window
        // there: an instance whose clock runs ahead) they stay counted here
        entry.shared = total && total.windowStart === windowStart ? Math.max(total.hits, entry.shared + hits) : entry.shared + hits;
      }
    } finally {
      this.busy = false;
    }
  }

  /** Once a window: forgets the rows of callers not seen since the window before (off the request path; a failure costs a few stale rows). */
  private async prune(): Promise<void> {
    const now = this.options.clock.now();
    const window = windowStartOf(now);
    if (window === this.prunedWindow) return;
    this.prunedWindow = window;
    await deleteStaleCounters(this.options.db, now).catch((err: unknown) => this.options.logger.warn({ err }, 'could not delete stale rate-limit counters'));
  }
}
