import type { AuditRow } from './store.ts';
import { ACTOR_TYPES } from './writer.ts';
import { listPageSchema } from '../http/responses.ts';

const nullableString = { type: ['string', 'null'] } as const;

export const AUDIT_ENTRY_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    timestamp: { type: 'string' },
    action: { type: 'string' },
    actorType: { enum: ACTOR_TYPES },
    actorId: nullableString,
    actorName: nullableString,
    orgId: nullableString,
    targetType: nullableString,
    targetId: nullableString,
    targetName: nullableString,
    outcome: { enum: ['success', 'failure'] },
    // what the action recorded of itself: a free-form object
    metadata: { type: ['object', 'null'] },
    ip: nullableString,
    userAgent: nullableString,
  },
  required: [
    'id',
    'timestamp',
    'action',
    'actorType',
    'actorId',
    'actorName',
    'orgId',
    'targetType',
    'targetId',
    'targetName',
    'outcome',
    'metadata',
    'ip',
    'userAgent',
  ],
} as const;

/** One page of the audit log, newest first: `{totalCount, page, perPage, items}`. */
export const AUDIT_PAGE_SCHEMA = listPageSchema('items', AUDIT_ENTRY_SCHEMA);

export function presentAuditEntry(row: AuditRow) {
  return {
    id: row.id,
    timestamp: new Date(Number(row.timestamp)).toISOString(),
    action: row.action,
    actorType: row.actor_type,
    actorId: row.actor_id,
    actorName: row.actor_name,
    orgId: row.org_id,
    targetType: row.target_type,
    targetId: row.target_id,
    targetName: row.target_name,
    outcome: row.outcome,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, unknown>) : null,
    ip: row.ip,
    userAgent: row.user_agent,
  };
}
