/**
 * Server administration: statistics, the effective configuration and the policy reload. All are
 * server actions in the policy (authz.server), so only a server admin is allowed, whatever roles
 * others hold.
 */
import { recordAudit, recordFailure } from '../audit/writer.ts';
import { PolicyLoadError } from '../authz/bundle.ts';
import { loadPolicySource } from '../authz/policy-source.ts';
import { effectiveSettings } from '../config.ts';
import { ServiceError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';
import type { RouteModule } from '../http/route.ts';
import { countLiveSessions } from '../identity/sessions.store.ts';
import { countResources } from './store.ts';

const count = { type: 'integer', minimum: 0 } as const;

const STATS_SCHEMA = {
  type: 'object',
  properties: {
    users: count,
    serviceAccounts: count,
    orgs: count,
    teams: count,
    folders: count,
    dashboards: count,
    alertRules: count,
    connectors: count,
    activeSessions: count,
  },
  required: ['users', 'serviceAccounts', 'orgs', 'teams', 'folders', 'dashboards', 'alertRules', 'connectors', 'activeSessions'],
} as const;

/** Every variable by name with its value: a map, since the variables grow with the service. */
const SETTINGS_SCHEMA = {
  type: 'object',
  propertyNames: { pattern: '^[A-Z][A-Z0-9_]*$' },
  additionalProperties: { type: ['string', 'number', 'boolean', 'array', 'null'], items: { type: 'string' } },
} as const;

const RELOADED_SCHEMA = {
  type: 'object',
  properties: {
    message: { type: 'string' },
    source: { enum: ['build', 'bundle'] },
    revision: { type: ['string', 'null'] },
    signer: { type: ['string', 'null'] },
  },
  required: ['message', 'source', 'revision', 'signer'],
  additionalProperties: false,
} as const;

/** A policy the reload refused: the running one stays. */
class PolicyRefusedError extends ServiceError {
  constructor(message: string) {
    super(422, message);
  }
}

export const adminRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/admin/policy/reload',
    access: 'authenticated',
    level: 'server',
    summary:
      'Reads the policy again (POLICY_BUNDLE_PATH verified with POLICY_VERIFICATION_KEY, else POLICY_WASM_PATH) and swaps it in; a refused one keeps the running policy (422, server admin).',
    responses: { 200: RELOADED_SCHEMA, 422: MESSAGE_SCHEMA },
    async handler({ ctx, principal, services, authorize }) {
      await authorize('server.policy:reload');
      const actor = actorOf(ctx, principal);
      const running = services.engine.provenance;
      let loaded;
      try {
        loaded = await loadPolicySource(services.config);
      } catch (err) {
        if (!(err instanceof PolicyLoadError)) throw err;
        services.metrics.policyReload('refused');
        await recordFailure(services, actor, {
          action: 'policy.reloaded',
          metadata: { file: services.config.policyBundle?.path ?? services.config.policyWasmPath, reason: err.message, revision: running.revision },
        });
        throw new PolicyRefusedError(`policy refused: ${err.message}; the running policy (revision ${running.revision ?? 'unknown'}) stays in use`);
      }
      services.engine.usePolicy(loaded);
      services.metrics.policyReload('loaded');
      const { source, file, revision, signer } = loaded.provenance;
      await recordAudit(
        services.db,
        actor,
        { action: 'policy.reloaded', metadata: { file, source, revision, signer, previousRevision: running.revision } },
        services.clock.now(),
      );
      ctx.body = { message: `policy reloaded: revision ${revision ?? 'unknown'}`, source, revision, signer };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/admin/stats',
    access: 'authenticated',
    level: 'server',
    summary: 'Counts users, service accounts, orgs, teams, folders, dashboards, alert rules, connectors and active sessions (server admin).',
    responses: { 200: STATS_SCHEMA },
    async handler({ ctx, services, authorize }) {
      await authorize('server.stats:read');
      const [resources, activeSessions] = await Promise.all([
        countResources(services.db),
        countLiveSessions(services.db, services.clock.now(), services.config.session),
      ]);
      ctx.body = { ...resources, activeSessions };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/admin/settings',
    access: 'authenticated',
    level: 'server',
    summary: 'The effective configuration by variable name, secrets redacted (server admin).',
    responses: { 200: SETTINGS_SCHEMA },
    async handler({ ctx, services, authorize }) {
      await authorize('settings:read', { scope: 'settings:*' });
      ctx.body = effectiveSettings(services.config);
    },
  });
};
