/**
 * The ops connector's reads: `POST /api/connectors/:uid/ops/read` `{command}` runs one
 * allowlisted kubectl-style read (src/ops/commands.ts) on a kubernetes connector's cluster, with
 * `connectors:query` on the connector. The chat tool `ops_read` does the same through runOpsRead.
 */
import { uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import type { Services } from '../services.ts';
import type { ConnectorRow } from '../connectors/store.ts';
import { connectorResource } from '../connectors/target.ts';
import { findOpsConnectorOrFail } from './connector.ts';
import { clusterOf } from './cluster.ts';
import { ALLOWLIST_TEXT, MAX_COMMAND_LENGTH, parseReadCommand } from './commands.ts';
import { runRead } from './reads.ts';

export const OPS_READ_BODY_SCHEMA = {
  type: 'object',
  properties: { command: { type: 'string', minLength: 1, maxLength: MAX_COMMAND_LENGTH } },
  required: ['command'],
  additionalProperties: false,
} as const;

export const OPS_READ_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string' },
    // the cluster's objects as it answers them: open on purpose
    result: { type: ['object', 'array'] },
    truncated: { type: 'boolean' },
  },
  required: ['command', 'result', 'truncated'],
} as const;

/** Parses and runs a read command on the connector's cluster (the caller has authorized connectors:query). */
export async function runOpsRead(services: Services, connector: ConnectorRow, command: string) {
  const parsed = parseReadCommand(command);
  const cluster = await clusterOf(connector, services);
  const { result, truncated } = await runRead(cluster, parsed, services.config.opsReadMaxBytes);
  return { command: command.trim(), result: result as object, truncated };
}

export const opsRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/connectors/:uid/ops/read',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: OPS_READ_BODY_SCHEMA,
    summary: `Runs one allowlisted kubectl-style read on a kubernetes connector's cluster (${ALLOWLIST_TEXT}).`,
    responses: { 200: OPS_READ_RESULT_SCHEMA },
    async handler({ ctx, params, body, orgId, services, authorize }) {
      await authorize('connectors:query', connectorResource(params.uid));
      const connector = await findOpsConnectorOrFail(services.db, orgId, params.uid);
      ctx.body = await runOpsRead(services, connector, body.command);
    },
  });
};
