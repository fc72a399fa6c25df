/**
 * SQL of the entries of `changes` connectors. An entry belongs to one connector of one org;
 * `labels` is stored as JSON text.
 */
import type { Knex } from 'knex';
import { findPage, type PageWindow } from '../db/search.ts';
import type { Tx } from '../db/transaction.ts';

export interface ChangeRow {
  org_id: string;
  connector_uid: string;
  id: string;
  time: number;
  kind: string;
  title: string;
  service: string | null;
  environment: string | null;
  labels: string;
  url: string | null;
  created_by: string | null;
  created_at: number;
}

/** Which entries a read asks for: `from`/`to` bound `time` (ms, inclusive). */
export interface ChangeFilter {
  from?: number;
  to?: number;
  kind?: string;
  service?: string;
}

const CHANGE_COLUMNS = [
  'org_id',
  'connector_uid',
  'id',
  'time',
  'kind',
  'title',
  'service',
  'environment',
  'labels',
  'url',
  'created_by',
  'created_at',
] as const;

export async function insertChangeRow(tx: Tx, row: ChangeRow): Promise<void> {
  await tx.db('connector_changes').insert(row);
}

export async function findChangeRow(db: Knex, orgId: string, connectorUid: string, id: string): Promise<ChangeRow | undefined> {
  return db('connector_changes')
    .where({ org_id: orgId, connector_uid: connectorUid, id })
    .first(...CHANGE_COLUMNS);
}

/** One page of the entries matching `filter`, newest first, and how many match. */
export async function findChangePage(
  db: Knex,
  orgId: string,
  connectorUid: string,
  filter: ChangeFilter,
  window: PageWindow,
): Promise<{ totalCount: number; rows: ChangeRow[] }> {
  const matching = () => {
    const query = db('connector_changes').where({ org_id: orgId, connector_uid: connectorUid });
    if (filter.from !== undefined) query.where('time', '>=', filter.from);
    if (filter.to !== undefined) query.where('time', '<=', filter.to);
    if (filter.kind) query.where('kind', filter.kind);
    if (filter.service) query.where('service', filter.service);
    return query.select(...CHANGE_COLUMNS);
  };
  return findPage<ChangeRow>(
    matching,
    [
      { column: 'time', order: 'desc' },
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ],
    window,
  );
}

/** Every entry of the connector: part of deleting it. */
export async function deleteChangeRows(tx: Tx, orgId: string, connectorUid: string): Promise<void> {
  await tx.db('connector_changes').where({ org_id: orgId, connector_uid: connectorUid }).delete();
}
