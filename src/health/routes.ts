/**
 * Health for orchestrators and load balancers. Liveness (`/api/health`) answers from the process
 * alone, so a database outage never gets a healthy instance restarted; readiness
 * (`/api/health/ready`) says whether this instance can serve: the database answers, every
 * migration of this code has run, and the policy is loaded. Both are public and read no
 * credential, so a probe needs none and costs no session lookup.
 */
import { pendingMigrations } from '../db/migrate.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import { pingDatabase } from './store.ts';

/** A probe gives up long before an orchestrator's own timeout would (Kubernetes: 1 s by default, often raised). */
const CHECK_TIMEOUT_MS = 2_000;

type CheckResult = 'ok' | string;

async function check(work: () => Promise<CheckResult>): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work(), timeout]);
  } catch (err) {
    // The driver's code names the failure without its message, which may hold host names.
    return `failed (${(err as { code?: string }).code ?? 'error'})`;
  } finally {
    clearTimeout(timer);
  }
}

async function readiness(services: Services): Promise<Record<'database' | 'migrations' | 'policy', CheckResult>> {
  const database = await check(async () => {
    await pingDatabase(services.db);
    return 'ok';
  });
  const migrations =
    database === 'ok'
      ? await check(async () => {
          const pending = await pendingMigrations(services.db);
          return pending.length === 0 ? 'ok' : `pending: ${pending.join(', ')}`;
        })
      : 'unknown: the database is unreachable';
  const policy = await check(async () => ((await services.engine.isLoaded()) ? 'ok' : 'not loaded'));
  return { database, migrations, policy };
}

const READINESS_SCHEMA = {
  type: 'object',
  properties: {
    status: { enum: ['ok', 'unavailable'] },
    database: { type: 'string' },
    migrations: { type: 'string' },
    policy: { type: 'string' },
    policyBundle: {
      type: 'object',
      description: 'The running policy: its source, revision (the Rego source hash) and signing key (null when unsigned)',
      properties: {
        source: { enum: ['build', 'bundle'] },
        revision: { type: ['string', 'null'] },
        signer: { type: ['string', 'null'] },
      },
      required: ['source', 'revision', 'signer'],
      additionalProperties: false,
    },
  },
  required: ['status', 'database', 'migrations', 'policy', 'policyBundle'],
} as const;

export const healthRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/health',
    access: 'public',
    skipAuthentication: true,
    summary: 'Liveness: the process answers (no database).',
    responses: { 200: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] } },
    async handler({ ctx }) {
      ctx.body = { status: 'ok' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/health/ready',
    access: 'public',
    skipAuthentication: true,
    summary: 'Readiness: the database answers, every migration has run, the policy is loaded (with its revision and signer).',
    responses: { 200: READINESS_SCHEMA, 503: READINESS_SCHEMA },
    async handler({ ctx, services }) {
      const checks = await readiness(services);
      const ready = Object.values(checks).every((result) => result === 'ok');
      ctx.status = ready ? 200 : 503;
      const { source, revision, signer } = services.engine.provenance;
      ctx.body = { status: ready ? 'ok' : 'unavailable', ...checks, policyBundle: { source, revision, signer } };
    },
  });
};
