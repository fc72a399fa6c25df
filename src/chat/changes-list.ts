/**
 * `changes_list`: one page of the entries of a changes connector (named, or the org's default),
 * newest first, needing `connectors:query` on it, as `GET /api/connectors/:uid/changes` answers them.
 */
import { changeQuerySchema, findChanges } from '../connectors/changes.ts';
import { CHANGE_PAGE_SCHEMA } from '../connectors/responses.ts';
import { connectorResource } from '../connectors/target.ts';
import { chooseConnector, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, presentChoice } from './connector-choice.ts';
import { defineTool } from './tool.ts';

export const changesList = defineTool({
  write: false,
  args: { ...changeQuerySchema, properties: { ...changeQuerySchema.properties, connector: connectorArgSchema } },
  result: {
    type: 'object',
    properties: { connector: CONNECTOR_CHOICE_SCHEMA, ...CHANGE_PAGE_SCHEMA.properties },
    required: ['connector', ...CHANGE_PAGE_SCHEMA.required],
  },
  async run({ args, orgId, services, authorize }) {
    const { connector: named, ...query } = args;
    const connector = await chooseConnector(services.db, orgId, 'changes', named);
    await authorize('connectors:query', connectorResource(connector.uid));
    return { connector: presentChoice(connector), ...(await findChanges(services.db, orgId, connector.uid, query)) };
  },
});
