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
