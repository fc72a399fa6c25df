/**
 * The audit writer. It is called with the transaction of the action it records, so an entry
 * exists exactly when the action committed. Failures are recorded in a transaction of their
 * own (the failed one rolled back). Never pass a password, token or hash in metadata.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { inStatementChunks } from '../db/chunks.ts';
import type { Services } from '../services.ts';
import { appendToOutbox, writesAuditOutbox } from './stream.store.ts';

export const ACTOR_TYPES = ['user', 'service_account', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export interface Actor {
  type: ActorType;
  id: string | null;
  name: string | null;
  ip: string | null;
  userAgent: string | null;
}

export interface AuditEvent {
  action: string;
  orgId?: string | null;
  target?: { type: string; id: string | null; name?: string | null };
  outcome?: 'success' | 'failure';
  metadata?: Record<string, unknown> | null;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, name: null, ip: null, userAgent: null };

let sequence = 0;

/**
 * Audit ids sort in the order the entries were written (within an instance, also inside one
 * millisecond): the time, a per-process counter, then randomness against other instances.
 */
function auditId(timestamp: number): string {
  sequence = (sequence + 1) % 36 ** 4;
  return `aud_${timestamp.toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}${randomBytes(4).toString('hex')}`;
}

export async function recordAudit(db: Knex, actor: Actor, event: AuditEvent, timestamp: number): Promise<void> {
  await recordAudits(db, actor, [event], timestamp);
}

/** Several entries of one actor at one time, in this order, in a few statements (a bulk change audits each of its parts). */
export async function recordAudits(db: Knex, actor: Actor, events: AuditEvent[], timestamp: number): Promise<void> {
  const rows = events.map((event) => ({
    id: auditId(timestamp),
    timestamp,
    action: event.action,
    actor_type: actor.type,
    actor_id: actor.id,
    actor_name: actor.name,
    org_id: event.orgId ?? null,
    target_type: event.target?.type ?? null,
    target_id: event.target?.id ?? null,
    target_name: event.target?.name ?? null,
    outcome: event.outcome ?? 'success',
    metadata: event.metadata ? JSON.stringify(event.metadata) : null,
    ip: actor.ip,
    user_agent: actor.userAgent,
  }));
  if (!writesAuditOutbox(db)) {
    await inStatementChunks(rows, (chunk) => db('audit_log').insert(chunk));
    return;
  }
  // With the audit stream on, the entries enter the outbox in their own transaction (audit/stream.ts).
  const write = async (trx: Knex) => {
    await inStatementChunks(rows, (chunk) => trx('audit_log').insert(chunk));
    await appendToOutbox(trx, rows, timestamp);
  };
  await (db.isTransaction ? write(db) : db.transaction(write));
}

/**
 * Records a refused action. The action's own transaction rolled back, so the entry gets a
 * transaction of its own; `outcome` is always `failure`.
 */
export async function recordFailure(services: Pick<Services, 'db' | 'clock'>, actor: Actor, event: Omit<AuditEvent, 'outcome'>): Promise<void> {
  await services.db.transaction((trx) => recordAudit(trx, actor, { ...event, outcome: 'failure' }, services.clock.now()));
}
