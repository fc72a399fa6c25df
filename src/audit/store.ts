/** Reading and pruning the audit log. */
import type { Knex } from 'knex';
import type { PageWindow } from '../db/search.ts';

export interface AuditRow {
  id: string;
  timestamp: number | string;
  action: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  org_id: string | null;
  target_type: string | null;
  target_id: string | null;
  target_name: string | null;
  outcome: string;
  metadata: string | null;
  ip: string | null;
  user_agent: string | null;
}

export interface AuditFilter {
  from?: number;
  to?: number;
  action?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  outcome?: string;
}

function filtered(db: Knex, filter: AuditFilter): Knex.QueryBuilder {
  const query = db('audit_log');
  if (filter.from !== undefined) query.where('timestamp', '>=', filter.from);
  if (filter.to !== undefined) query.where('timestamp', '<=', filter.to);
  if (filter.action) query.where('action', filter.action);
  if (filter.actorId) query.where('actor_id', filter.actorId);
  if (filter.targetType) query.where('target_type', filter.targetType);
  if (filter.targetId) query.where('target_id', filter.targetId);
  if (filter.outcome) query.where('outcome', filter.outcome);
  return query;
}

export async function findAuditEntries(db: Knex, filter: AuditFilter, page: PageWindow): Promise<{ totalCount: number; rows: AuditRow[] }> {
  const [countRow] = await filtered(db, filter).count<Array<{ total: number | string }>>({ total: '*' });
  const rows: AuditRow[] = await filtered(db, filter)
    .orderBy([
      { column: 'timestamp', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(page.limit)
    .offset(page.offset)
    .select('*');
  return { totalCount: Number(countRow?.total ?? 0), rows };
}

export async function deleteAuditEntriesBefore(db: Knex, cutoff: number): Promise<number> {
  return db('audit_log').where('timestamp', '<', cutoff).delete();
}
