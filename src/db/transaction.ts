/**
 * One unit of work: a knex transaction plus what it changed in the orgs' policy data. The
 * orgs' policy revision is bumped inside the transaction (other instances poll it) and, once
 * the commit succeeded, this instance's engine is told at once, so the next authorize() sees
 * the change.
 */
import type { Knex } from 'knex';
import { mergeChange, type OrgChange, type PolicyFragment } from '../authz/fragments.ts';

export const ALL_ORGS = '*';

export interface PolicyChangeListener {
  /** Called after commit: org id (`*` = every org) -> the fragments it changed, or 'all'. */
  policyDataChanged(changes: ReadonlyMap<string, OrgChange>): void;
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

/** MySQL picks a deadlock victim and expects it to be retried; `work` must touch only the DB. */
const DEADLOCK_RETRIES = 3;

function isDeadlock(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'ER_LOCK_DEADLOCK';
}

export async function transact<T>(db: Knex, listener: PolicyChangeListener, work: (tx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactOnce(db, listener, work);
    } catch (err) {
      if (!isDeadlock(err) || attempt >= DEADLOCK_RETRIES) throw err;
    }
  }
}

async function transactOnce<T>(db: Knex, listener: PolicyChangeListener, work: (tx: Tx) => Promise<T>): Promise<T> {
  const changes = new Map<string, OrgChange>();
  const result = await db.transaction(async (trx) => {
    const value = await work({
      db: trx,
      policyChanged(orgId?: string, ...fragments: PolicyFragment[]) {
        const key = orgId ?? ALL_ORGS;
        changes.set(key, mergeChange(changes.get(key), fragments.length > 0 ? fragments : 'all'));
      },
    });
    if (changes.size > 0) {
      const bump = trx('orgs').increment('policy_revision', 1);
      if (!changes.has(ALL_ORGS)) bump.whereIn('id', [...changes.keys()]);
      await bump;
    }
    return value;
  });
  if (changes.size > 0) listener.policyDataChanged(changes);
  await listener.verifyAfterCommit();
  return result;
}
