/**
 * Rows an instance keeps so that a frequent request reads no SQL, with the freshness rules:
 * - on this instance, any write to the cache's watched tables (src/db/write-watch.ts) empties
 *   it, so the request after a change reads the database again;
 * - a write made by another instance is seen within the cache's time to live: no entry is used
 *   longer than that after it was loaded (0 turns the cache off);
 * - what a load read while a write went by is used for that request only, never kept;
 * - requests that miss the same key while its load is under way share that load, unless a write
 *   on this instance went by since it started (then they read again).
 * The caches and their tables are in src/identity/caches.ts.
 */
import { LRUCache } from 'lru-cache';
import type { WriteWatch } from './write-watch.ts';

/** Bounded: past it the least recently used entry goes. */
const MAX_ENTRIES = 10_000;

export interface ReadCacheOptions<T> {
  /** At most this many entries (default 10,000). */
  maxEntries?: number;
  /** Whether a loaded value may be kept (a value too large to keep is used for its request only). */
  keep?: (value: T) => boolean;
}

interface Entry<T> {
  value: T;
  loadedAt: number;
}

export class ReadCache<T> {
  private readonly entries: LRUCache<string, Entry<T>>;
  private readonly keep: (value: T) => boolean;
  /** The loads under way, with the write generation each started in. */
  private readonly loading = new Map<string, { generation: number; value: Promise<T | null> }>();

  constructor(
    private readonly watch: WriteWatch,
    private readonly ttlMs: number,
    options: ReadCacheOptions<T> = {},
  ) {
    this.entries = new LRUCache<string, Entry<T>>({ max: options.maxEntries ?? MAX_ENTRIES });
    this.keep = options.keep ?? (() => true);
    watch.onChange(() => this.entries.clear());
  }

  /**
   * The value for `key`: from the cache while fresh, at once (a request that finds it waits for
   * nothing), else from `load` (null: nothing there, which is not kept).
   */
  get(key: string, now: number, load: () => Promise<T | null>): T | Promise<T | null> {
    const cached = this.entries.get(key);
    if (cached && now - cached.loadedAt < this.ttlMs && now >= cached.loadedAt) return cached.value;
    if (cached) this.entries.delete(key);
    return this.load(key, now, load);
  }

  private load(key: string, now: number, load: () => Promise<T | null>): Promise<T | null> {
    const generation = this.watch.generation;
    if (this.ttlMs <= 0) return this.loadAndKeep(key, now, generation, load);
    const pending = this.loading.get(key);
    if (pending && pending.generation === generation) return pending.value;
    const loading = { generation, value: this.loadAndKeep(key, now, generation, load) };
    this.loading.set(key, loading);
    const settled = () => {
      if (this.loading.get(key) === loading) this.loading.delete(key);
    };
    loading.value.then(settled, settled);
    return loading.value;
  }

  private async loadAndKeep(key: string, now: number, generation: number, load: () => Promise<T | null>): Promise<T | null> {
    const value = await load();
    if (value !== null && this.ttlMs > 0 && this.watch.generation === generation && this.keep(value)) {
      this.entries.set(key, { value, loadedAt: now });
    }
    return value;
  }

  /** Forgets `key` (its rows changed in a way the caller knows of). */
  forget(key: string): void {
    this.entries.delete(key);
    this.loading.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The keys of the entries kept (tests check what they are made of). */
  keys(): string[] {
    return [...this.entries.keys()];
  }
}
