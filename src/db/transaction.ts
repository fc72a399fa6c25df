/**
 * One unit of work: a knex transaction plus the list of orgs whose policy data it changes.
 * The orgs' policy revision is bumped inside the transaction (other instances poll it) and,
 * once the commit succeeded, this instance's policy cache is told at once, so the next
 * authorize() sees the change.
 */
import type { Knex } from 'knex';

export const ALL_ORGS = '*';

export interface PolicyChangeListener {
  /** Called after commit with the org ids whose policy data changed (`*` = every org). */
  policyDataChanged(orgIds: ReadonlySet<string>): void;
}

export interface Tx {
  readonly db: Knex.Transaction;
  /** Marks an org's policy data as changed by this transaction; no argument = every org. */
  policyChanged(orgId?: string): void;
}

/** MySQL picks a deadlock victim and expects it to be retried; `work` must touch only the DB. */
const DEADLOCK_RETRIES = 3;

function isDeadlock(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === 'ER_LOCK_DEADLOCK';
}

export async function transact<T>(
  db: Knex,
  listener: PolicyChangeListener,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactOnce(db, listener, work);
    } catch (err) {
      if (!isDeadlock(err) || attempt >= DEADLOCK_RETRIES) throw err;
    }
  }
}

async function transactOnce<T>(db: Knex, listener: PolicyChangeListener, work: (tx: Tx) => Promise<T>): Promise<T> {
  const changed = new Set<string>();
  const result = await db.transaction(async (trx) => {
    const value = await work({
      db: trx,
      policyChanged(orgId?: string) {
        changed.add(orgId ?? ALL_ORGS);
      },
    });
    if (changed.size > 0) {
      const bump = trx('orgs').increment('policy_revision', 1);
      if (!changed.has(ALL_ORGS)) bump.whereIn('id', [...changed]);
      await bump;
    }
    return value;
  });
  if (changed.size > 0) listener.policyDataChanged(changed);
  return result;
}
