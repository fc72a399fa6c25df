/**
 * `ops_plan_create`: proposes an ops plan on a kubernetes connector (named, or the org's default
 * ops connector), as `POST /api/connectors/:uid/ops/plans` does: checked against the allowlists
 * and dry-run, then pending until another user approves it. A write in chat terms (it records a
 * plan, so a read_only agent may not), with `connectors:query` on the connector like the route.
 * Approving a plan is never a chat tool: a person decides, through the API.
 */
import { findOpsConnectorOrFail } from '../ops/connector.ts';
import { PLAN_SCHEMA, planSchema, proposePlan } from '../ops/plans.ts';
import { connectorResource } from '../connectors/target.ts';
import { chooseConnector, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, presentChoice } from './connector-choice.ts';
import { defineTool } from './tool.ts';

export const opsPlanCreate = defineTool({
  write: true,
  args: { ...planSchema, properties: { ...planSchema.properties, connector: connectorArgSchema } },
  result: { type: 'object', properties: { connector: CONNECTOR_CHOICE_SCHEMA, plan: PLAN_SCHEMA }, required: ['connector', 'plan'] },
  async run({ args, orgId, services, actor, subject, authorize }) {
    const { connector: named, ...input } = args;
    const chosen = await chooseConnector(services.db, orgId, 'ops', named);
    await authorize('connectors:query', connectorResource(chosen.uid));
    const connector = await findOpsConnectorOrFail(services.db, orgId, chosen.uid);
    const plan = await proposePlan(services, actor, subject, connector, input, 'body.args');
    return { connector: presentChoice(connector), plan };
  },
});
