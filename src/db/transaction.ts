/**
 * One unit of work: a knex transaction plus what it changed in the orgs' policy data. The
 * orgs' policy revision is bumped inside the transaction (other instances poll it) and, once
 * the commit succeeded, this instance's engine is told at once, so the next authorize() sees
 * the change.
 */
import type { Knex } from 'knex';
import { dialectOf } from './knex.ts';
import { mergeChange, type OrgChange, type PolicyFragment } from '../authz/fragments.ts';

export const ALL_ORGS = '*';

export interface PolicyChangeListener {
  /**
   * Called after commit: org id (`*` = every org) -> the fragments it changed, or 'all'; and the
   * revision the commit left each org it bumped at (a document patched with these fragments is at
   * that revision only if no other instance's commit came in between).
   */
  policyDataChanged(changes: ReadonlyMap<string, OrgChange>, revisions: ReadonlyMap<string, number>): void;
  /** Called after every commit; in test mode it checks the loaded policy documents against the database. */
  verifyAfterCommit(): Promise<void>;
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
 * to be run again. `work` must touch only the DB: audit entries are written through `tx.db`
 * and the engine hears of policy changes only after the commit, so a retry repeats nothing
 * outside the database. The backoff is exponential with full jitter, so the losers of one
 * deadlock do not collide again in lockstep.
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

export async function transact<T>(db: Knex, listener: PolicyChangeListener, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactOnce(db, listener, work);
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

async function transactOnce<T>(db: Knex, listener: PolicyChangeListener, work: (tx: Tx) => Promise<T>): Promise<T> {
  const changes = new Map<string, OrgChange>();
  const revisions = new Map<string, number>();
  const result = await db.transaction(async (trx) => {
    const value = await work({
      db: trx,
      policyChanged(orgId?: string, ...fragments: PolicyFragment[]) {
        const key = orgId ?? ALL_ORGS;
        changes.set(key, mergeChange(changes.get(key), fragments.length > 0 ? fragments : 'all'));
      },
    });
    if (changes.size > 0) {
      // Last in the transaction, and in a table no foreign key reads: writers queue on it only for
      // the instant before their commit (migrations/20261123120000-policy-revisions.ts).
      const bump = trx('policy_revisions').increment('revision', 1);
      if (!changes.has(ALL_ORGS)) bump.whereIn('org_id', [...changes.keys()].sort());
      await bump;
      // The rows stay locked until the commit: what they read now is what the commit leaves.
      const bumped = trx('policy_revisions').select('org_id', 'revision');
      if (!changes.has(ALL_ORGS)) bumped.whereIn('org_id', [...changes.keys()]);
      for (const row of (await bumped) as Array<{ org_id: string; revision: number | string }>) revisions.set(row.org_id, Number(row.revision));
    }
    return value;
  }, writeIsolation(db));
  if (changes.size > 0) listener.policyDataChanged(changes, revisions);
  await listener.verifyAfterCommit();
  return result;
}
