/**
 * The policy change log, an outbox written in the transaction that made the change: each commit
 * that touched an org's policy data appends one row `{org_id, seq, fragments}`, and every
 * instance brings its loaded documents to the newest `seq` by reading the rows after its own.
 * A change is therefore seen by every instance exactly when it is committed, and a missed notice
 * cannot exist: there is no notice, only the log.
 */
import type { Knex } from 'knex';

/** What a committed change touched in an org's policy data; the engine patches just those places. */
export type PolicyFragment =
  | { kind: 'role'; uid: string }
  | { kind: 'member'; userId: string }
  | { kind: 'team'; teamId: string }
  /** The folders whose ancestor chain changed (made, moved with their subtree, deleted); no uids: the whole tree. */
  | { kind: 'folders'; uids?: string[] }
  | { kind: 'dashboard'; uid: string }
  | { kind: 'alert_rule'; uid: string }
  | { kind: 'legacy_acl' }
  /** A connector's label rules (saved, or gone with the connector). */
  | { kind: 'label_rules'; connectorUid: string };

/** The fragments one commit touched in one stream, or everything (the document is rebuilt). */
export type OrgChange = PolicyFragment[] | 'all';

/** The stream of changes that concern every org: global roles, or an unrecorded write of unknown scope. */
export const GLOBAL_STREAM = '*';

export function mergeChange(current: OrgChange | undefined, next: OrgChange): OrgChange {
  if (current === 'all' || next === 'all') return 'all';
  return [...(current ?? []), ...next];
}

/** One row of the log. */
export interface PolicyChange {
  stream: string;
  seq: number;
  change: OrgChange;
}

/**
 * Appends one change per stream, in stream order (so concurrent writers lock the heads in the
 * same order and cannot deadlock), and returns the new head of each. The head row stays locked
 * until the commit: on each stream, sequence order is commit order, so a reader that has seen
 * `seq` has seen everything before it.
 */
export async function appendPolicyChanges(trx: Knex.Transaction, changes: ReadonlyMap<string, OrgChange>, nowMs: number): Promise<Map<string, number>> {
  const heads = new Map<string, number>();
  for (const stream of [...changes.keys()].sort()) {
    // an update locks just the row; the first change of a stream inserts it (two such race to the upsert)
    const moved = await trx('policy_heads').where('stream', stream).increment('seq', 1);
    if (moved === 0) {
      await trx('policy_heads')
        .insert({ stream, seq: 1 })
        .onConflict('stream')
        .merge({ seq: trx.raw('?? + 1', ['policy_heads.seq']) });
    }
    const head = (await trx('policy_heads').where('stream', stream).first('seq')) as { seq: number | string };
    const seq = Number(head.seq);
    heads.set(stream, seq);
    await trx('policy_changes').insert({ stream, seq, fragments: JSON.stringify(changes.get(stream)), created_at: nowMs });
  }
  return heads;
}

/** The newest seq of each stream asked for; a stream never written is at 0. */
export async function readPolicyHeads(db: Knex, streams: readonly string[]): Promise<Map<string, number>> {
  const rows: Array<{ stream: string; seq: number | string }> = await db('policy_heads')
    .whereIn('stream', [...streams])
    .select('stream', 'seq');
  const heads = new Map(streams.map((stream) => [stream, 0]));
  for (const row of rows) heads.set(row.stream, Number(row.seq));
  return heads;
}

/** The changes of `stream` after `afterSeq`, oldest first, at most `limit` of them. */
export async function readPolicyChanges(db: Knex, stream: string, afterSeq: number, limit: number): Promise<PolicyChange[]> {
  const rows: Array<{ seq: number | string; fragments: string }> = await db('policy_changes')
    .where('stream', stream)
    .andWhere('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .select('seq', 'fragments');
  return rows.map((row) => ({ stream, seq: Number(row.seq), change: JSON.parse(row.fragments) as OrgChange }));
}

/**
 * Deletes changes older than `beforeMs`, keeping each stream's newest: an instance whose document is
 * older than what is kept finds a gap and rebuilds, so pruning never loses a change.
 */
export async function prunePolicyChanges(db: Knex, beforeMs: number): Promise<number> {
  const heads = db('policy_heads').select('stream', 'seq');
  let removed = 0;
  for (const { stream, seq } of (await heads) as Array<{ stream: string; seq: number | string }>) {
    removed += await db('policy_changes').where('stream', stream).andWhere('seq', '<', Number(seq)).andWhere('created_at', '<', beforeMs).delete();
  }
  return removed;
}
