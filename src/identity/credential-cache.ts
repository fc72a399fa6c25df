/**
 * The rows behind a credential (a session or an API token and its owner), kept per instance so
 * that an authenticated request reads no SQL. Keyed by the SHA-256 of the presented secret.
 *
 * Freshness:
 * - on this instance, any write to users, sessions or api_tokens (src/db/write-watch.ts) empties
 *   the cache, so the request after a revocation, a disable or a password change reads the
 *   database again;
 * - a write made by another instance is seen within PRINCIPAL_CACHE_TTL_MS: no entry is used
 *   longer than that after it was loaded (0 turns the cache off);
 * - the time limits (a session's lifetime and idle limit, a token's expiry) are checked on
 *   every use by the callers, against the cached rows.
 */
import type { WriteWatch } from '../db/write-watch.ts';

/** Bounded: past it the least recently used entry goes. */
const MAX_ENTRIES = 10_000;

/** The tables whose rows make a principal, with the columns whose updates do not change it. */
export const CREDENTIAL_TABLES = {
  users: ['last_seen_at'],
  sessions: ['last_seen_at'],
  api_tokens: ['last_used_at'],
} as const;

interface Entry<T> {
  value: T;
  loadedAt: number;
}

export class CredentialCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly watch: WriteWatch,
    private readonly ttlMs: number,
  ) {
    watch.onChange(() => this.entries.clear());
  }

  /**
   * The value for `key`: from the cache while fresh, else from `load` (null: no such
   * credential, which is not kept). What a load read while a write was on its way is used for
   * this request only.
   */
  async get(key: string, now: number, load: () => Promise<T | null>): Promise<T | null> {
    const cached = this.entries.get(key);
    if (cached && now - cached.loadedAt < this.ttlMs && now >= cached.loadedAt) {
      // most recently used last: the first entry is the one to drop
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached.value;
    }
    if (cached) this.entries.delete(key);
    const generation = this.watch.generation;
    const value = await load();
    if (value !== null && this.ttlMs > 0 && this.watch.generation === generation) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, { value, loadedAt: now });
    }
    return value;
  }

  /** Forgets `key` (its rows changed in a way the caller knows of). */
  forget(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
