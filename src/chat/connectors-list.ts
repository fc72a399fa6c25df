/**
 * `connectors_list`: how the agent finds the connector to use, among those the caller may read.
 * With a name, that connector; with a signal type, the org's default for it, else the only
 * one, else "ambiguous" with the candidates (the agent asks the user); without either, every
 * readable connector grouped by signal type, defaults marked.
 */
import { findConnectorsByUids, findConnectorUids } from '../connectors/store.ts';
import { connectorResource, SIGNAL_TYPES } from '../connectors/target.ts';
import { assertSignal, CONNECTOR_CHOICE_SCHEMA, connectorArgSchema, findNamedConnector, presentChoice } from './connector-choice.ts';
import { defineTool } from './tool.ts';

export const connectorsList = defineTool({
  write: false,
  args: {
    type: 'object',
    properties: {
      signalType: { type: 'string', enum: [...SIGNAL_TYPES] },
      name: connectorArgSchema,
    },
    additionalProperties: false,
  },
  // one connector; every readable one by signal type; none; or the candidates to ask the user about
  result: {
    anyOf: [
      { type: 'object', properties: { status: { const: 'ok' }, connector: CONNECTOR_CHOICE_SCHEMA }, required: ['status', 'connector'] },
      {
        type: 'object',
        properties: {
          status: { const: 'ok' },
          bySignal: {
            type: 'object',
            properties: Object.fromEntries(SIGNAL_TYPES.map((signal) => [signal, { type: 'array', items: CONNECTOR_CHOICE_SCHEMA }])),
            required: [...SIGNAL_TYPES],
          },
        },
        required: ['status', 'bySignal'],
      },
      { type: 'object', properties: { status: { const: 'none' }, message: { type: 'string' } }, required: ['status', 'message'] },
      {
        type: 'object',
        properties: { status: { const: 'ambiguous' }, message: { type: 'string' }, candidates: { type: 'array', items: CONNECTOR_CHOICE_SCHEMA } },
        required: ['status', 'message', 'candidates'],
      },
    ],
  },
  async run({ args, orgId, services, authorize, filter }) {
    if (args.name !== undefined) {
      const connector = await findNamedConnector(services.db, orgId, args.name);
      if (args.signalType) assertSignal(connector, args.signalType);
      await authorize('connectors:read', connectorResource(connector.uid));
      return { status: 'ok', connector: presentChoice(connector) };
    }
    await authorize('connectors:read');
    const uids = await findConnectorUids(services.db, orgId, { signalType: args.signalType });
    const readable = (await findConnectorsByUids(services.db, orgId, await filter('connectors:read', uids, connectorResource))).map(presentChoice);
    if (!args.signalType) {
      return { status: 'ok', bySignal: Object.fromEntries(SIGNAL_TYPES.map((signal) => [signal, readable.filter((c) => c.signalType === signal)])) };
    }
    const chosen = readable.find((connector) => connector.isDefault) ?? (readable.length === 1 ? readable[0] : undefined);
    if (chosen) return { status: 'ok', connector: chosen };
    if (readable.length === 0) return { status: 'none', message: `there is no ${args.signalType} connector you may read` };
    return {
      status: 'ambiguous',
      message: `${readable.length} ${args.signalType} connectors and none is the default: ask the user which one to use`,
      candidates: readable,
    };
  },
});
