import { BadRequestError } from '../errors.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { auditEntryOf } from './entry.ts';
import { AUDIT_PAGE_SCHEMA } from './presenter.ts';
import { findAuditEntries } from './store.ts';
import { readStreamStatus } from './stream.store.ts';

const nullableText = { type: ['string', 'null'] } as const;

const AUDIT_STREAM_STATUS_SCHEMA = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean' },
    kind: { type: ['string', 'null'], enum: ['victorialogs', 'loki', 'webhook', null] },
    target: nullableText,
    pending: { type: 'integer' },
    oldestPendingAt: nullableText,
    lagSeconds: { type: 'number' },
    lastDeliveryAt: nullableText,
    delivered: { type: 'integer' },
    lastError: nullableText,
    lastErrorAt: nullableText,
    deadLetters: { type: 'integer' },
    recentDeadLetters: {
      type: 'array',
      items: {
        type: 'object',
        properties: { id: { type: 'string' }, orgId: nullableText, seq: { type: 'integer' }, error: { type: 'string' }, failedAt: { type: 'string' } },
        required: ['id', 'orgId', 'seq', 'error', 'failedAt'],
      },
    },
  },
  required: [
    'enabled',
    'kind',
    'target',
    'pending',
    'oldestPendingAt',
    'lagSeconds',
    'lastDeliveryAt',
    'delivered',
    'lastError',
    'lastErrorAt',
    'deadLetters',
    'recentDeadLetters',
  ],
} as const;

const isoOrNull = (millis: number | null) => (millis === null ? null : new Date(millis).toISOString());

/** The sink without what may be secret in its URL (a query string, a fragment). */
function targetOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** `from`/`to` accept ISO 8601 or epoch milliseconds. */
function parseInstant(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const millis = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(millis)) throw new BadRequestError(`query.${name} must be an ISO 8601 time or epoch milliseconds`);
  return millis;
}

export const auditRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/admin/audit-log',
    access: 'authenticated',
    level: 'server',
    query: {
      type: 'object',
      properties: {
        ...paginationQuerySchema,
        from: { type: 'string' },
        to: { type: 'string' },
        action: { type: 'string', maxLength: 100 },
        actorId: { type: 'string', maxLength: 40 },
        outcome: { type: 'string', enum: ['success', 'failure'] },
        targetType: { type: 'string', maxLength: 100 },
        targetId: { type: 'string', maxLength: 190 },
      },
      additionalProperties: false,
    },
    summary: 'Lists the audit log, newest first, filtered by time, action, actor, target and outcome (server admin).',
    responses: { 200: AUDIT_PAGE_SCHEMA },
    async handler({ ctx, query, services, authorize }) {
      await authorize('audit:read');
      const page = pageOf(query);
      const { totalCount, rows } = await findAuditEntries(
        services.db,
        {
          from: parseInstant('from', query.from),
          to: parseInstant('to', query.to),
          action: query.action,
          actorId: query.actorId,
          targetType: query.targetType,
          targetId: query.targetId,
          outcome: query.outcome,
        },
        page,
      );
      ctx.body = { totalCount, page: page.page, perPage: page.perPage, items: rows.map(auditEntryOf) };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/admin/audit-stream',
    access: 'authenticated',
    level: 'server',
    summary: 'How the audit stream keeps up: entries waiting and for how long, the last delivery, the last error and the dead letters (server admin).',
    responses: { 200: AUDIT_STREAM_STATUS_SCHEMA },
    async handler({ ctx, services, authorize }) {
      await authorize('audit:read');
      const stream = services.config.auditStream;
      const status = await readStreamStatus(services.db);
      ctx.body = {
        enabled: stream !== null,
        kind: stream?.kind ?? null,
        target: stream ? targetOf(stream.url) : null,
        pending: status.pending,
        oldestPendingAt: isoOrNull(status.oldestPendingAt),
        lagSeconds: status.oldestPendingAt === null ? 0 : Math.max(0, (services.clock.now() - status.oldestPendingAt) / 1000),
        lastDeliveryAt: isoOrNull(status.lastDeliveryAt),
        delivered: status.delivered,
        lastError: status.lastError,
        lastErrorAt: isoOrNull(status.lastErrorAt),
        deadLetters: status.deadLetters,
        recentDeadLetters: status.recentDeadLetters.map((letter) => ({ ...letter, failedAt: new Date(letter.failedAt).toISOString() })),
      };
    },
  });
};
