/**
 * All SQL of the audit stream: the outbox the audit writer appends to in the entry's own
 * transaction, and what the deliverer reads, deletes and records.
 */
import type { Knex } from 'knex';
import { inStatementChunks } from '../db/chunks.ts';
import { auditEntryOf, type AuditEntry } from './entry.ts';
import type { AuditRow } from './store.ts';

/** The stream of the entries that belong to no org. */
export const NO_ORG_STREAM = '-';

/** How many dead letters are kept for the operator to read; older ones are only counted. */
export const DEAD_LETTERS_KEPT = 1000;

/**
 * One streamed entry: the fields of GET /api/admin/audit-log and `seq`, the entry's place in its
 * org's stream. `id` is the audit row's own id, the same on every instance and every redelivery:
 * a sink drops duplicates by it.
 */
export type StreamedEntry = AuditEntry & { seq: number };

const streamedEntry = (row: AuditRow, seq: number): StreamedEntry => ({ ...auditEntryOf(row), seq });

/** The databases whose audit entries go to the outbox: those of an instance with AUDIT_STREAM set. */
const streamed = new WeakSet<object>();

/**
 * Turns the outbox on for `db`. Keyed by the connection configuration, which a knex transaction
 * shares with the knex it was opened from, so the writer sees it through any transaction.
 */
export function enableAuditOutbox(db: Knex): void {
  streamed.add(db.client.config as object);
}

export function writesAuditOutbox(db: Knex): boolean {
  return streamed.has(db.client.config as object);
}

/**
 * Appends `rows` to their orgs' streams, in the caller's transaction. Each org's head row is
 * incremented first, so it stays locked until the commit and the next writer of the org takes
 * the next numbers after it: an org's sequence order is its commit order, and a deliverer that
 * reads the committed rows never finds a gap that fills in later. The heads are taken in stream
 * order so that two writers of the same orgs cannot deadlock on them.
 */
export async function appendToOutbox(trx: Knex, rows: readonly AuditRow[], nowMs: number): Promise<void> {
  const byStream = new Map<string, AuditRow[]>();
  for (const row of rows) {
    const stream = row.org_id ?? NO_ORG_STREAM;
    byStream.set(stream, [...(byStream.get(stream) ?? []), row]);
  }
  for (const stream of [...byStream.keys()].sort()) {
    const entries = byStream.get(stream)!;
    const moved = await trx('audit_stream_heads').where('stream', stream).increment('seq', entries.length);
    if (moved === 0) {
      await trx('audit_stream_heads')
        .insert({ stream, seq: entries.length })
        .onConflict('stream')
        .merge({ seq: trx.raw('?? + ?', ['audit_stream_heads.seq', entries.length]) });
    }
    const head = Number(((await trx('audit_stream_heads').where('stream', stream).first('seq')) as { seq: number | string }).seq);
    const first = head - entries.length + 1;
    const outbox = entries.map((row, i) => ({
      stream,
      seq: first + i,
      audit_id: row.id,
      entry: JSON.stringify(streamedEntry(row, first + i)),
      created_at: nowMs,
    }));
    await inStatementChunks(outbox, (chunk) => trx('audit_outbox').insert(chunk));
  }
}

export interface OutboxRow {
  stream: string;
  seq: number;
  auditId: string;
  entry: StreamedEntry;
  attempts: number;
}

/** How many streams one batch draws from: the ones whose oldest entry waits longest. */
const STREAMS_PER_BATCH = 50;

/**
 * The next batch: a prefix of each of the longest-waiting streams, at most `size` entries in
 * all, ordered by stream and sequence. The outbox holds each stream's undelivered entries
 * without gaps (rows leave from the front), so a stream's prefix is a range of its numbers.
 */
export async function readOutboxBatch(db: Knex, size: number): Promise<OutboxRow[]> {
  const heads: Array<{ stream: string; first: number | string }> = await db('audit_outbox')
    .groupBy('stream')
    .orderByRaw('min(created_at), stream')
    .limit(Math.min(STREAMS_PER_BATCH, size))
    .select('stream', db.raw('min(seq) as ??', ['first']));
  if (heads.length === 0) return [];
  const perStream = Math.max(1, Math.floor(size / heads.length));
  const rows: Array<{ stream: string; seq: number | string; audit_id: string; entry: string; attempts: number | string }> = await db('audit_outbox')
    .where((where) => {
      for (const head of heads) where.orWhere((one) => one.where('stream', head.stream).andWhere('seq', '<', Number(head.first) + perStream));
    })
    .orderBy([{ column: 'stream' }, { column: 'seq' }])
    .select('stream', 'seq', 'audit_id', 'entry', 'attempts');
  return rows.map((row) => ({
    stream: row.stream,
    seq: Number(row.seq),
    auditId: row.audit_id,
    entry: JSON.parse(row.entry) as StreamedEntry,
    attempts: Number(row.attempts),
  }));
}

/** Deletes the delivered rows: each stream's delivered prefix, up to its last delivered number. */
export async function deleteDelivered(db: Knex, rows: readonly OutboxRow[]): Promise<void> {
  const last = new Map<string, number>();
  for (const row of rows) last.set(row.stream, Math.max(row.seq, last.get(row.stream) ?? 0));
  for (const [stream, seq] of last) await db('audit_outbox').where('stream', stream).andWhere('seq', '<=', seq).delete();
}

export async function countAttempt(db: Knex, row: OutboxRow): Promise<void> {
  await db('audit_outbox').where({ stream: row.stream, seq: row.seq }).increment('attempts', 1);
}

/** Gives `row` up: it leaves the outbox for the dead letters, of which the newest DEAD_LETTERS_KEPT are kept. */
export async function moveToDeadLetters(db: Knex, row: OutboxRow, error: string, nowMs: number): Promise<void> {
  await db('audit_stream_dead_letters').insert({
    stream: row.stream,
    seq: row.seq,
    audit_id: row.auditId,
    entry: JSON.stringify(row.entry),
    error: error.slice(0, 1000),
    failed_at: nowMs,
  });
  await db('audit_outbox').where({ stream: row.stream, seq: row.seq }).delete();
  await db('audit_stream_status').where('id', 1).increment('dead_letters', 1);
  const [oldestKept] = await db('audit_stream_dead_letters')
    .orderBy([
      { column: 'failed_at', order: 'desc' },
      { column: 'stream', order: 'desc' },
      { column: 'seq', order: 'desc' },
    ])
    .offset(DEAD_LETTERS_KEPT - 1)
    .limit(1)
    .select('failed_at');
  if (oldestKept) await db('audit_stream_dead_letters').where('failed_at', '<', Number(oldestKept.failed_at)).delete();
}

export async function recordDelivery(db: Knex, count: number, nowMs: number): Promise<void> {
  await db('audit_stream_status')
    .where('id', 1)
    .update({ last_delivery_at: nowMs, delivered: db.raw('?? + ?', ['delivered', count]) });
}

export async function recordStreamError(db: Knex, error: string, nowMs: number): Promise<void> {
  await db('audit_stream_status')
    .where('id', 1)
    .update({ last_error: error.slice(0, 1000), last_error_at: nowMs });
}

/**
 * On MySQL/MariaDB: the deliverers' lock, held by the caller's transaction until it ends, or
 * false at once when another instance holds it (SKIP LOCKED). A crashed holder's connection
 * closes and its lock goes with it, so no clock decides who delivers.
 */
export async function lockDeliverer(trx: Knex.Transaction): Promise<boolean> {
  const rows = await trx('audit_stream_status').where('id', 1).forUpdate().skipLocked().select('id');
  return rows.length > 0;
}

/** On SQLite: takes or renews the deliverers' lease until `untilMs`, unless another holder's lease runs. */
export async function takeLease(db: Knex, holder: string, nowMs: number, untilMs: number): Promise<boolean> {
  const taken = await db('audit_stream_status')
    .where('id', 1)
    .andWhere((free) => free.whereNull('lease_holder').orWhere('lease_holder', holder).orWhere('lease_until', '<', nowMs))
    .update({ lease_holder: holder, lease_until: untilMs });
  return taken > 0;
}

/** Whether `holder` still holds the lease at `nowMs`. */
export async function holdsLease(db: Knex, holder: string, nowMs: number): Promise<boolean> {
  const row = (await db('audit_stream_status').where('id', 1).first('lease_holder', 'lease_until')) as
    { lease_holder: string | null; lease_until: number | string | null } | undefined;
  return row?.lease_holder === holder && Number(row.lease_until) >= nowMs;
}

export async function releaseLease(db: Knex, holder: string): Promise<void> {
  await db('audit_stream_status').where({ id: 1, lease_holder: holder }).update({ lease_holder: null, lease_until: null });
}

export interface StreamStatus {
  pending: number;
  oldestPendingAt: number | null;
  lastDeliveryAt: number | null;
  delivered: number;
  lastError: string | null;
  lastErrorAt: number | null;
  deadLetters: number;
  recentDeadLetters: Array<{ id: string; orgId: string | null; seq: number; error: string; failedAt: number }>;
}

const nullableNumber = (value: number | string | null | undefined) => (value === null || value === undefined ? null : Number(value));

/** Whether any entry waits: an idle round asks only this, taking no lock and writing nothing. */
export async function hasPending(db: Knex): Promise<boolean> {
  return (await db('audit_outbox').first('stream')) !== undefined;
}

export async function readBacklog(db: Knex): Promise<{ pending: number; oldestPendingAt: number | null }> {
  const [row] = await db('audit_outbox').select(db.raw('count(*) as ??', ['pending']), db.raw('min(created_at) as ??', ['oldest']));
  return { pending: Number(row?.pending ?? 0), oldestPendingAt: nullableNumber(row?.oldest) };
}

export async function readStreamStatus(db: Knex): Promise<StreamStatus> {
  const backlog = await readBacklog(db);
  const status = (await db('audit_stream_status').where('id', 1).first('*')) as Record<string, number | string | null> | undefined;
  const dead: Array<{ stream: string; seq: number | string; audit_id: string; error: string; failed_at: number | string }> = await db(
    'audit_stream_dead_letters',
  )
    .orderBy([
      { column: 'failed_at', order: 'desc' },
      { column: 'stream', order: 'desc' },
      { column: 'seq', order: 'desc' },
    ])
    .limit(20)
    .select('stream', 'seq', 'audit_id', 'error', 'failed_at');
  return {
    ...backlog,
    lastDeliveryAt: nullableNumber(status?.last_delivery_at),
    delivered: Number(status?.delivered ?? 0),
    lastError: (status?.last_error as string | null | undefined) ?? null,
    lastErrorAt: nullableNumber(status?.last_error_at),
    deadLetters: Number(status?.dead_letters ?? 0),
    recentDeadLetters: dead.map((row) => ({
      id: row.audit_id,
      orgId: row.stream === NO_ORG_STREAM ? null : row.stream,
      seq: Number(row.seq),
      error: row.error,
      failedAt: Number(row.failed_at),
    })),
  };
}
