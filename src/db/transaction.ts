/**
 * One unit of work: a knex transaction plus what it changed in the orgs' policy data. The
 * changes it names are appended to the policy change log inside the transaction (an outbox:
 * committed together or not at all); once the commit succeeded, the engine is told the new heads
 * so the next authorize() reads them. A write to the policy data that names no change is caught
 * here, in production too: it is reported and recorded as a change of everything, so no
 * instance keeps a document it cannot know is stale.
 */
import type { Knex } from 'knex';
import { dialectOf } from './knex.ts';
import { appendPolicyChanges, GLOBAL_STREAM, mergeChange, type OrgChange, type PolicyFragment } from './policy-changes.ts';
import { parseWrite, type Write } from './write-watch.ts';

export interface PolicyChangeListener {
  /** Whether a write statement changes what a policy document is built from. */
  writesPolicyData(write: Write): boolean;
  /**
   * A transaction wrote policy data without naming a change. It is then recorded as a change of
   * everything; the listener reports it (and test mode throws, rolling the transaction back).
   */
  unrecordedWrite(tables: readonly string[]): void;
  /** After the commit: the new head of each stream the transaction appended to. */
  committed(heads: ReadonlyMap<string, number>): Promise<void>;
}

export interface Tx {
  readonly db: Knex.Transaction;
  /**
   * Marks policy data as changed by this transaction: of one org, or of every org when
   * `orgId` is undefined (a global role). Naming the fragments lets the engine patch instead
   * of rebuilding.
   */
  policyChanged(orgId?: string, ...fragments: PolicyFragment[]): void;
}

/**
 * InnoDB picks a deadlock victim (or gives up waiting for a lock) and expects the transaction
 * to be run again. `work` must touch only the DB: audit entries and policy changes are written
 * through `tx.db`, so a retry repeats nothing outside the database. The backoff is exponential
 * with full jitter, so the losers of one deadlock do not collide again in lockstep.
 */
const RETRYABLE_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const MAX_ATTEMPTS = 12;
const BACKOFF_BASE_MS = 10;
const BACKOFF_CAP_MS = 1000;

function isRetryable(err: unknown): boolean {
  return RETRYABLE_CODES.has((err as { code?: string } | null)?.code ?? '');
}

function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}

export async function transact<T>(db: Knex, listener: PolicyChangeListener, now: () => number, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactOnce(db, listener, now, work);
    } catch (err) {
      if (!isRetryable(err) || attempt >= MAX_ATTEMPTS) throw err;
      await backoff(attempt);
    }
  }
}

/**
 * READ COMMITTED on MySQL/MariaDB: under REPEATABLE READ, InnoDB takes gap and next-key locks
 * on every locking read and unique check, and parallel inserts into the same index ranges
 * (role_permissions, org_members, teams) deadlock one another. The rows a write depends on are
 * locked explicitly (lockOrg, lockQuotaOwner), which READ COMMITTED honours just the same.
 */
function writeIsolation(db: Knex): Knex.TransactionConfig | undefined {
  return dialectOf(db) === 'mysql' ? { isolationLevel: 'read committed' } : undefined;
}

async function transactOnce<T>(db: Knex, listener: PolicyChangeListener, now: () => number, work: (tx: Tx) => Promise<T>): Promise<T> {
  const changes = new Map<string, OrgChange>();
  let heads = new Map<string, number>();
  const result = await db.transaction(async (trx) => {
    const policyWrites = new Set<string>();
    // Seen once answered: an update or delete that matched no row changed nothing (knex answers it with the count).
    const watch = (response: unknown, query: { sql?: string }) => {
      const write = parseWrite(query.sql);
      if (write && response !== 0 && listener.writesPolicyData(write)) policyWrites.add(write.table);
    };
    trx.on('query-response', watch);
    let value: T;
    try {
      value = await work({
        db: trx,
        policyChanged(orgId?: string, ...fragments: PolicyFragment[]) {
          const stream = orgId ?? GLOBAL_STREAM;
          changes.set(stream, mergeChange(changes.get(stream), fragments.length > 0 ? fragments : 'all'));
        },
      });
    } finally {
      trx.off('query-response', watch);
    }
    if (policyWrites.size > 0 && changes.size === 0) {
      listener.unrecordedWrite([...policyWrites].sort());
      changes.set(GLOBAL_STREAM, 'all');
    }
    // Last in the transaction: the head rows stay locked from here to the commit.
    if (changes.size > 0) heads = await appendPolicyChanges(trx, changes, now());
    return value;
  }, writeIsolation(db));
  if (heads.size > 0) await listener.committed(heads);
  return result;
}
