/**
 * An audit entry as the service shows it, from its row: GET /api/admin/audit-log answers it, and
 * the audit stream sends it. The writer never records a password, token or hash, so none is here.
 */
import type { AuditRow } from './store.ts';

export function auditEntryOf(row: AuditRow) {
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

export type AuditEntry = ReturnType<typeof auditEntryOf>;
