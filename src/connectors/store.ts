/**
 * SQL of connectors. A connector belongs to one org; its credentials are stored sealed (the
 * store never sees them in the clear). `default_for` is the signal type while the connector is
 * the org's default for it; the unique index (org, default_for) keeps one, and setting a default
 * locks the org row first so concurrent changes take turns instead of failing on the index.
 * Connectors are not in the policy data (only grants on them, which their deletion removes).
 */
import type { Knex } from 'knex';
import { removeGrantsOnResources } from '../accesscontrol/policy-writer.ts';
import { dialectOf } from '../db/knex.ts';
import { whereContains } from '../db/search.ts';
import type { Tx } from '../db/transaction.ts';
import { deleteChangeRows } from './changes.store.ts';
import { deletePlanRows } from '../ops/plans.store.ts';

export interface ConnectorRow {
  org_id: string;
  uid: string;
  name: string;
  type: string;
  signal_type: string;
  url: string;
  access: string;
  default_for: string | null;
  json_data: string | null;
  secure_json_data: string | null;
  version: number;
  created_at: number;
  updated_at: number;
  created_by: string | null;
  updated_by: string | null;
}

/** What a save writes: every field the API sets, credentials already sealed. */
export interface ConnectorContent {
  name: string;
  type: string;
  signalType: string;
  url: string;
  access: string;
  isDefault: boolean;
  jsonData: Record<string, unknown>;
  sealedSecrets: string | null;
}

export interface ConnectorFilter {
  signalType?: string;
  type?: string;
  search?: string;
}

const CONNECTOR_COLUMNS = [
  'org_id',
  'uid',
  'name',
  'type',
  'signal_type',
  'url',
  'access',
  'default_for',
  'json_data',
  'secure_json_data',
  'version',
  'created_at',
  'updated_at',
  'created_by',
  'updated_by',
] as const;

/** `lock`: on MySQL the row stays locked until the transaction ends (writers of its grants take turns). */
export async function findConnector(db: Knex, orgId: string, uid: string, lock = false): Promise<ConnectorRow | undefined> {
  const query = db('connectors').where({ org_id: orgId, uid });
  if (lock && dialectOf(db) === 'mysql') query.forUpdate();
  return query.first(...CONNECTOR_COLUMNS);
}

export async function findConnectorByName(db: Knex, orgId: string, name: string): Promise<ConnectorRow | undefined> {
  return db('connectors')
    .where({ org_id: orgId })
    .whereRaw('LOWER(name) = ?', [name.toLowerCase()])
    .first(...CONNECTOR_COLUMNS);
}

/** The org's default connector of `signalType`, if it has one. */
export async function findDefaultConnector(db: Knex, orgId: string, signalType: string): Promise<ConnectorRow | undefined> {
  return db('connectors')
    .where({ org_id: orgId, default_for: signalType })
    .first(...CONNECTOR_COLUMNS);
}

/** Uids of the org's connectors matching the filter, by name. Only uids: the caller filters them through the policy first. */
export async function findConnectorUids(db: Knex, orgId: string, filter: ConnectorFilter): Promise<string[]> {
  const query = db('connectors').where('org_id', orgId);
  if (filter.signalType) query.where('signal_type', filter.signalType);
  if (filter.type) query.where('type', filter.type);
  return whereContains(query, ['name'], filter.search)
    .orderBy([{ column: 'name' }, { column: 'uid' }])
    .pluck('uid');
}

/** The connectors of `uids`, in the order of `uids`. */
export async function findConnectorsByUids(db: Knex, orgId: string, uids: string[]): Promise<ConnectorRow[]> {
  if (uids.length === 0) return [];
  const rows: ConnectorRow[] = await db('connectors')
    .where('org_id', orgId)
    .whereIn('uid', uids)
    .select(...CONNECTOR_COLUMNS);
  const byUid = new Map(rows.map((row) => [row.uid, row]));
  return uids.map((uid) => byUid.get(uid)).filter((row): row is ConnectorRow => row !== undefined);
}

/**
 * Makes room for a new default of `signalType`: locks the org row (MySQL; SQLite runs one
 * transaction at a time), then clears the current default.
 */
async function clearDefault(tx: Tx, orgId: string, signalType: string): Promise<void> {
  if (dialectOf(tx.db) === 'mysql') await tx.db('orgs').where('id', orgId).forUpdate().first('id');
  await tx.db('connectors').where({ org_id: orgId, default_for: signalType }).update({ default_for: null });
}

export async function insertConnector(tx: Tx, orgId: string, uid: string, content: ConnectorContent, createdBy: string, now: number): Promise<void> {
  if (content.isDefault) await clearDefault(tx, orgId, content.signalType);
  await tx.db('connectors').insert({
    org_id: orgId,
    uid,
    name: content.name,
    type: content.type,
    signal_type: content.signalType,
    url: content.url,
    access: content.access,
    default_for: content.isDefault ? content.signalType : null,
    json_data: JSON.stringify(content.jsonData),
    secure_json_data: content.sealedSecrets,
    version: 1,
    created_at: now,
    updated_at: now,
    created_by: createdBy,
    updated_by: createdBy,
  });
}

/**
 * Replaces the connector's content as its next version; false when `current` is no longer the
 * stored version (a concurrent save won), and nothing is written.
 */
export async function updateConnector(tx: Tx, current: ConnectorRow, content: ConnectorContent, updatedBy: string, now: number): Promise<boolean> {
  if (content.isDefault && current.default_for === null) await clearDefault(tx, current.org_id, content.signalType);
  const updated = await tx
    .db('connectors')
    .where({ org_id: current.org_id, uid: current.uid, version: current.version })
    .update({
      name: content.name,
      url: content.url,
      access: content.access,
      default_for: content.isDefault ? content.signalType : null,
      json_data: JSON.stringify(content.jsonData),
      secure_json_data: content.sealedSecrets,
      version: current.version + 1,
      updated_by: updatedBy,
      updated_at: now,
    });
  return updated > 0;
}

/** Deletes the connector, its change entries, its ops plans and every grant on it. */
export async function deleteConnector(tx: Tx, connector: ConnectorRow): Promise<void> {
  await deleteChangeRows(tx, connector.org_id, connector.uid);
  await deletePlanRows(tx, connector.org_id, connector.uid);
  await removeGrantsOnResources(tx, connector.org_id, { connectorUids: [connector.uid] });
  await tx.db('connectors').where({ org_id: connector.org_id, uid: connector.uid }).delete();
}

/** One label rule as stored, in its connector's order. */
export interface LabelRuleRow {
  position: number;
  principal_kind: 'user' | 'service_account' | 'team' | 'role';
  principal_id: string;
  selector: string;
}

export async function findLabelRules(db: Knex, orgId: string, connectorUid: string): Promise<LabelRuleRow[]> {
  return db('connector_label_rules')
    .where({ org_id: orgId, connector_uid: connectorUid })
    .orderBy('position')
    .select('position', 'principal_kind', 'principal_id', 'selector');
}

/** Which of `ids` are members of the org, and whether each is a service account. */
export async function findMemberKinds(db: Knex, orgId: string, ids: string[]): Promise<Map<string, { serviceAccount: boolean }>> {
  if (ids.length === 0) return new Map();
  const rows: Array<{ id: string; is_service_account: boolean | number }> = await db('org_members as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.org_id', orgId)
    .whereIn('m.user_id', ids)
    .select('u.id', 'u.is_service_account');
  return new Map(rows.map((row) => [row.id, { serviceAccount: !!row.is_service_account }]));
}
