/** What the connector routes share: the types, the policy target, the lookup, the audit target. */
import type { Knex } from 'knex';
import type { ResourceRef } from '../authz/types.ts';
import { NotFoundError } from '../errors.ts';
import { findConnector, type ConnectorRow } from './store.ts';

/**
 * Connector types and the signal each reads; `changes` has no backend (entries are recorded by
 * hand), `kubernetes` is the ops connector (allowlisted reads and approved plans, src/ops).
 */
export const CONNECTOR_TYPES = { tsmetrics: 'metrics', logstore: 'logs', changes: 'changes', kubernetes: 'ops' } as const;
export type ConnectorType = keyof typeof CONNECTOR_TYPES;
export const SIGNAL_TYPES = ['metrics', 'logs', 'changes', 'ops'] as const;

export const connectorResource = (uid: string): ResourceRef => ({ kind: 'connectors', uid });

export const connectorAuditTarget = (connector: { uid: string; name: string }) => ({ type: 'connector', id: connector.uid, name: connector.name });

/** The connector in the active org (one of another org is as unknown as a missing one); call it after authorize(). */
export async function findConnectorOrFail(db: Knex, orgId: string, uid: string, lock = false): Promise<ConnectorRow> {
  const connector = await findConnector(db, orgId, uid, lock);
  if (!connector) throw new NotFoundError(`connector ${uid} not found`);
  return connector;
}
