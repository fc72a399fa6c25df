import { BadRequestError } from '../errors.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { AUDIT_PAGE_SCHEMA, presentAuditEntry } from './presenter.ts';
import { findAuditEntries } from './store.ts';

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
      },
      additionalProperties: false,
    },
    summary: 'Lists the audit log, newest first, filtered by time, action, actor and outcome (server admin).',
    responses: { 200: AUDIT_PAGE_SCHEMA },
    async handler({ ctx, query, services, authorize }) {
      await authorize('audit:read');
      const page = pageOf(query);
      const { totalCount, rows } = await findAuditEntries(
        services.db,
        { from: parseInstant('from', query.from), to: parseInstant('to', query.to), action: query.action, actorId: query.actorId, outcome: query.outcome },
        page,
      );
      ctx.body = { totalCount, page: page.page, perPage: page.perPage, items: rows.map(presentAuditEntry) };
    },
  });
};
