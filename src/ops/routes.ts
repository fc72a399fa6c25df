/**
 * The ops connector's reads: `POST /api/connectors/:uid/ops/read` `{command}` runs one
 * allowlisted kubectl-style read (src/ops/commands.ts) on a kubernetes connector's cluster, with
 * `connectors:query` on the connector. The chat tool `ops_read` does the same through runOpsRead
 * (src/ops/reads.ts).
 */
import { uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { connectorResource } from '../connectors/target.ts';
import { findOpsConnectorOrFail } from './connector.ts';
import { ALLOWLIST_TEXT } from './commands.ts';
import { OPS_READ_BODY_SCHEMA, OPS_READ_RESULT_SCHEMA, runOpsRead } from './reads.ts';

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
