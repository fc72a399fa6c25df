/** The ops connector a read or a plan is about. */
import type { Knex } from 'knex';
import { BadRequestError } from '../errors.ts';
import type { ConnectorRow } from '../connectors/store.ts';
import { findConnectorOrFail } from '../connectors/target.ts';

/** The connector `uid` of the org when it is a kubernetes connector: 404 when missing, 400 for another type. Call after authorize(). */
export async function findOpsConnectorOrFail(db: Knex, orgId: string, uid: string): Promise<ConnectorRow> {
  const connector = await findConnectorOrFail(db, orgId, uid);
  if (connector.type !== 'kubernetes')
    throw new BadRequestError(`connector ${uid} is of type ${connector.type}: only a kubernetes connector runs ops reads and plans`);
  return connector;
}
