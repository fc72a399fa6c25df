/** Prunes audit entries older than AUDIT_RETENTION_DAYS, once at boot and then daily. */
import type { Services } from '../services.ts';
import { deleteAuditEntriesBefore } from './store.ts';

const DAY_MS = 86_400_000;

export async function pruneAuditLog(services: Services): Promise<number> {
  const cutoff = services.clock.now() - services.config.auditRetentionDays * DAY_MS;
  return deleteAuditEntriesBefore(services.db, cutoff);
}

export function startAuditRetention(services: Services): () => void {
  const run = () =>
    pruneAuditLog(services)
      .then((pruned) => pruned > 0 && services.logger.info({ pruned }, 'pruned audit log'))
      .catch((err) => services.logger.error({ err }, 'audit retention failed'));
  void run();
  const timer = setInterval(run, DAY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
