/**
 * The connector a chat tool reads: the one the agent names (uid or name), or the org's default
 * for the tool's signal. Found before the call's decision, which is about that connector: an
 * unknown name is a 404 and a connector of another signal a 400, whoever asks.
 */
import type { Knex } from 'knex';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { presentConnector } from '../connectors/presenter.ts';
import { findConnector, findConnectorByName, findDefaultConnector, type ConnectorRow } from '../connectors/store.ts';

/** The `connector` argument of a tool: a connector's uid or name. */
export const connectorArgSchema = { type: 'string', minLength: 1, maxLength: 190 } as const;

/** A connector named by uid first, then by name. */
export async function findNamedConnector(db: Knex, orgId: string, named: string): Promise<ConnectorRow> {
  const connector = (await findConnector(db, orgId, named)) ?? (await findConnectorByName(db, orgId, named));
  if (!connector) throw new NotFoundError(`connector ${named} not found (connectors_list shows the connectors you may use)`);
  return connector;
}

export function assertSignal(connector: ConnectorRow, signalType: string): void {
  if (connector.signal_type !== signalType) {
    throw new BadRequestError(`connector ${connector.name} is a ${connector.signal_type} connector, not a ${signalType} one`);
  }
}

export async function chooseConnector(db: Knex, orgId: string, signalType: string, named: string | undefined): Promise<ConnectorRow> {
  if (named === undefined) {
    const fallback = await findDefaultConnector(db, orgId, signalType);
    if (!fallback) throw new BadRequestError(`body.args.connector is required: the org has no default ${signalType} connector (connectors_list shows them)`);
    return fallback;
  }
  const connector = await findNamedConnector(db, orgId, named);
  assertSignal(connector, signalType);
  return connector;
}

/** A connector as an agent sees it: what names and tells it apart, never settings or secrets. */
export const CONNECTOR_CHOICE_SCHEMA = {
  type: 'object',
  properties: { uid: { type: 'string' }, name: { type: 'string' }, type: { type: 'string' }, signalType: { type: 'string' }, isDefault: { type: 'boolean' } },
  required: ['uid', 'name', 'type', 'signalType', 'isDefault'],
} as const;

export function presentChoice(connector: ConnectorRow) {
  const { uid, name, type, signalType, isDefault } = presentConnector(connector, []);
  return { uid, name, type, signalType, isDefault };
}
