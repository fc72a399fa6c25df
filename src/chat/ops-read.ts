/**
 * `ops_read`: one allowlisted kubectl-style read (`get pods -n shop`, `rollout status
 * deployment/web`…) on an ops connector (named, or the org's default), as
 * `POST /api/connectors/:uid/ops/read` runs it; needs `connectors:query` on the connector.
 */
import { connectorResource } from '../connectors/target.ts';
import { OPS_READ_BODY_SCHEMA, OPS_READ_RESULT_SCHEMA, runOpsRead } from '../ops/reads.ts';
import { chooseConnector, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, presentChoice } from './connector-choice.ts';
import { defineTool } from './tool.ts';

export const opsRead = defineTool({
  write: false,
  args: { ...OPS_READ_BODY_SCHEMA, properties: { ...OPS_READ_BODY_SCHEMA.properties, connector: connectorArgSchema } },
  result: {
    type: 'object',
    properties: { connector: CONNECTOR_CHOICE_SCHEMA, ...OPS_READ_RESULT_SCHEMA.properties },
    required: ['connector', ...OPS_READ_RESULT_SCHEMA.required],
  },
  async run({ args, orgId, services, authorize }) {
    const connector = await chooseConnector(services.db, orgId, 'ops', args.connector);
    await authorize('connectors:query', connectorResource(connector.uid));
    return { connector: presentChoice(connector), ...(await runOpsRead(services, connector, args.command)) };
  },
});
