import type { AuditRow } from './store.ts';

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
