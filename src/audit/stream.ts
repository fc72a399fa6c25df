/**
 * The audit stream's deliverer: every instance runs one; one at a time sends. Each round takes
 * the deliverers' lock, reads a batch from the outbox (the entries the audit writer appended in
 * their own transactions), sends it, and deletes what the sink took. An entry is deleted only
 * after the sink answered 2xx, so a crash anywhere sends it again: delivery is at least once,
 * and the entry's `id` lets the sink drop the repeat.
 *
 * Order: an org's entries are numbered in commit order (stream.store.ts), a batch holds a
 * prefix of each org's waiting entries in that order, and only one deliverer sends at a time, so
 * the sink receives each org's entries in order (a repeat after a failure starts again from the
 * oldest undelivered one).
 *
 * Who sends: on MySQL/MariaDB the round runs in a transaction that holds the lock row
 * (`SELECT … FOR UPDATE SKIP LOCKED`) through the send and the deletes; another instance skips
 * the locked row and tries at its next round, and a killed holder's lock ends with its
 * connection, so no clock is trusted. SQLite has no row locks and cannot hold its one write
 * lock through a network request without stopping every writer, so there a lease row says who
 * sends; instances of one SQLite file share one machine and so one clock, the lease outlasts the
 * longest send (OUTBOUND_TIMEOUT_MS plus a margin), and the holder checks it still holds it
 * before it deletes.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { ConfigError } from '../config.ts';
import type { Config } from '../config.ts';
import { dialectOf } from '../db/knex.ts';
import { ServiceError } from '../errors.ts';
import { AddressPolicy } from '../outbound/address-policy.ts';
import { authHeaders, type OutboundAuth } from '../outbound/auth.ts';
import { OutboundClient } from '../outbound/client.ts';
import type { Services } from '../services.ts';
import { sinkRequest } from './stream-format.ts';
import {
  countAttempt,
  deleteDelivered,
  enableAuditOutbox,
  hasPending,
  holdsLease,
  lockDeliverer,
  moveToDeadLetters,
  readBacklog,
  readOutboxBatch,
  recordDelivery,
  recordStreamError,
  releaseLease,
  takeLease,
  type OutboxRow,
} from './stream.store.ts';

export type AuditStreamConfig = NonNullable<Config['auditStream']>;

/** Answers that say the entries themselves are refused: sent again they would be refused again. */
const REFUSING_STATUSES = new Set([400, 413, 415, 422]);

/** How often the backlog gauges are counted (a count over the whole outbox) while batches follow one another. */
const OBSERVE_INTERVAL_MS = 1000;

/** How much longer than the longest send the SQLite lease lasts. */
const LEASE_MARGIN_MS = 5000;

function streamAuth(stream: AuditStreamConfig): OutboundAuth {
  const colon = stream.basicAuth?.indexOf(':') ?? -1;
  return {
    ...(stream.bearerToken !== null && { bearerToken: stream.bearerToken }),
    ...(stream.basicAuth !== null && { basic: { user: stream.basicAuth.slice(0, colon), password: stream.basicAuth.slice(colon + 1) } }),
    headers: stream.headers,
  };
}

/**
 * Refuses at startup what the deliverer could never send (a ConfigError: exit 2), and turns the
 * outbox on for `db` so every audit entry from now on is streamed.
 */
export function prepareAuditStream(config: Config, db: Knex): void {
  if (!config.auditStream) return;
  try {
    authHeaders(streamAuth(config.auditStream));
  } catch (err) {
    throw new ConfigError(`AUDIT_STREAM_HEADERS: ${(err as Error).message.replace(/^header: /, '')}`);
  }
  enableAuditOutbox(db);
}

type Round = { kind: 'idle' | 'busy' | 'more' } | { kind: 'failed'; error: string };

interface Sent {
  ok: boolean;
  /** The sink refused the entries themselves (not itself failing). */
  refused: boolean;
  error: string;
}

export class AuditStreamDeliverer {
  private readonly holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private readonly client: OutboundClient;
  private readonly auth: OutboundAuth;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private failures = 0;
  private observedAt = 0;
  /** After a batch was refused, its entries go one at a time, so the one refused is found and the rest pass. */
  private alone = 0;

  constructor(
    private readonly services: Pick<Services, 'db' | 'config' | 'metrics' | 'logger' | 'clock'>,
    private readonly stream: AuditStreamConfig,
  ) {
    // The sink is the operator's choice, not an org admin's: the connectors' address policy (no loopback, no private ranges) does not apply.
    this.client = new OutboundClient(new AddressPolicy(['0.0.0.0/0', '::/0'], []), services.config.outbound);
    this.auth = streamAuth(stream);
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops the rounds and waits for the one under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => (this.running = null));
    }, delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    let round: Round;
    try {
      round = await this.round();
    } catch (err) {
      // the database itself failed: try again later
      round = { kind: 'failed', error: `database: ${(err as Error).message}` };
    }
    if (round.kind === 'failed') {
      this.failures++;
      this.services.metrics.auditStreamFailure();
      this.services.logger.warn({ error: round.error, failures: this.failures }, 'audit stream delivery failed');
    } else this.failures = 0;
    // while batches follow one another, at most once a second
    if (round.kind !== 'more' || Date.now() - this.observedAt >= OBSERVE_INTERVAL_MS) {
      this.observedAt = Date.now();
      await this.observeBacklog().catch(() => undefined);
    }
    const { intervalMs, maxBackoffMs } = this.stream;
    if (round.kind === 'more') return this.schedule(0);
    if (round.kind === 'failed') return this.schedule(Math.min(maxBackoffMs, intervalMs * 2 ** Math.min(this.failures, 20)));
    this.schedule(intervalMs);
  }

  private async observeBacklog(): Promise<void> {
    const { pending, oldestPendingAt } = await readBacklog(this.services.db);
    const age = oldestPendingAt === null ? 0 : Math.max(0, (this.services.clock.now() - oldestPendingAt) / 1000);
    this.services.metrics.auditStreamBacklog(pending, age);
  }

  /** One batch, sent by this instance if it holds the deliverers' lock. */
  async round(): Promise<Round> {
    const { db } = this.services;
    if (!(await hasPending(db))) return { kind: 'idle' };
    if (dialectOf(db) === 'mysql') {
      return db.transaction(
        async (trx) => {
          if (!(await lockDeliverer(trx))) return { kind: 'busy' } as const;
          return this.deliver(trx, async () => true);
        },
        { isolationLevel: 'read committed' },
      );
    }
    const leaseMs = this.services.config.outbound.timeoutMs + this.services.config.outbound.connectTimeoutMs + LEASE_MARGIN_MS;
    if (!(await takeLease(db, this.holder, Date.now(), Date.now() + leaseMs))) return { kind: 'busy' };
    try {
      return await this.deliver(db, () => holdsLease(db, this.holder, Date.now()));
    } finally {
      await releaseLease(db, this.holder);
    }
  }

  private async deliver(db: Knex, stillHolds: () => Promise<boolean>): Promise<Round> {
    const size = this.alone > 0 ? 1 : this.stream.batchSize;
    const batch = await readOutboxBatch(db, size);
    if (batch.length === 0) return { kind: 'idle' };
    const sent = await this.send(batch);
    const now = this.services.clock.now();
    if (!(await stillHolds())) return { kind: 'failed', error: 'the deliverers’ lease ran out during the send; the batch goes again' };
    if (sent.ok) {
      // one transaction (a savepoint inside MariaDB's): a kill between the two never loses the count
      await db.transaction(async (trx) => {
        await deleteDelivered(trx, batch);
        await recordDelivery(trx, batch.length, now);
      });
      this.services.metrics.auditStreamDelivery(batch.length);
      if (this.alone > 0) this.alone--;
      return batch.length >= size ? { kind: 'more' } : { kind: 'idle' };
    }
    await recordStreamError(db, sent.error, now);
    if (sent.refused && batch.length > 1) this.alone = batch.length;
    else if (sent.refused) await this.refusedAlone(db, batch[0]!, sent.error, now);
    return { kind: 'failed', error: sent.error };
  }

  private async refusedAlone(db: Knex, row: OutboxRow, error: string, now: number): Promise<void> {
    if (row.attempts + 1 < this.stream.maxAttempts) return countAttempt(db, row);
    await db.transaction((trx) => moveToDeadLetters(trx, row, error, now));
    this.alone = Math.max(0, this.alone - 1);
    this.services.metrics.auditStreamDeadLetter();
    this.services.logger.error({ auditId: row.auditId, orgId: row.entry.orgId, seq: row.seq, error }, 'audit stream gave an entry up: the sink refused it');
  }

  private async send(batch: readonly OutboxRow[]): Promise<Sent> {
    const request = sinkRequest(
      this.stream.kind,
      this.stream.url,
      batch.map((row) => row.entry),
      this.stream.secret,
    );
    try {
      const answer = await this.client.request({ method: 'POST', url: request.url, headers: request.headers, body: request.body, auth: this.auth });
      if (answer.status >= 200 && answer.status < 300) return { ok: true, refused: false, error: '' };
      const said = answer.body.toString('utf8').slice(0, 300).trim();
      return { ok: false, refused: REFUSING_STATUSES.has(answer.status), error: `the sink answered ${answer.status}${said ? `: ${said}` : ''}` };
    } catch (err) {
      if (err instanceof ServiceError) return { ok: false, refused: false, error: err.message };
      throw err;
    }
  }
}

/** Starts this instance's deliverer when AUDIT_STREAM is set; the returned function stops it. */
export function startAuditStream(services: Services): () => Promise<void> {
  if (!services.config.auditStream) return async () => {};
  const deliverer = new AuditStreamDeliverer(services, services.config.auditStream);
  deliverer.start();
  return () => deliverer.stop();
}
