/**
 * `changes_record`: records a change (a deploy, a config or infrastructure change) on a changes
 * connector (named, or the org's default), as `POST /api/connectors/:uid/changes` does. A write:
 * it needs `connectors:write` on the connector and a permission mode other than read_only.
 */
import { changeEntrySchema, findChangesConnectorOrFail, recordChange } from '../connectors/changes.ts';
import { CHANGE_ENTRY_SCHEMA } from '../connectors/responses.ts';
import { connectorResource } from '../connectors/target.ts';
import { chooseConnector, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, presentChoice } from './connector-choice.ts';
import { defineTool } from './tool.ts';

export const changesRecord = defineTool({
  write: true,
  args: { ...changeEntrySchema, properties: { ...changeEntrySchema.properties, connector: connectorArgSchema } },
  result: { type: 'object', properties: { connector: CONNECTOR_CHOICE_SCHEMA, change: CHANGE_ENTRY_SCHEMA }, required: ['connector', 'change'] },
  async run({ args, orgId, services, actor, userId, authorize }) {
    const { connector: named, ...entry } = args;
    const chosen = await chooseConnector(services.db, orgId, 'changes', named);
    await authorize('connectors:write', connectorResource(chosen.uid));
    const now = services.clock.now();
    const change = await services.transact(async (tx) => {
      // read again in the transaction: the connector may have gone since it was chosen
      const connector = await findChangesConnectorOrFail(tx.db, orgId, chosen.uid);
      return recordChange(tx, actor, connector, entry, userId, now);
    });
    return { connector: presentChoice(chosen), change };
  },
});
