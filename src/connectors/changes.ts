/**
 * The entries of a `changes` connector (deploys, config and infrastructure changes), as the API
 * and the chat tools `changes_record` / `changes_list` both use them: the handler or the tool
 * authorizes, then calls these, which check what a schema cannot, write, audit and present.
 */
import { recordAudit, type Actor } from '../audit/writer.ts';
import { newUid } from '../db/ids.ts';
import type { Tx } from '../db/transaction.ts';
import { BadRequestError } from '../errors.ts';
import type { Infer } from '../http/guard.ts';
import { listPage, pageOf, paginationQuerySchema, type ListPage } from '../http/pagination.ts';
import { epochMsSchema } from '../http/schemas.ts';
import type { Knex } from 'knex';
import { findChangePage, findChangeRow, insertChangeRow, type ChangeRow } from './changes.store.ts';
import type { ConnectorRow } from './store.ts';
import { connectorAuditTarget, findConnectorOrFail } from './target.ts';

export const CHANGE_KINDS = ['deploy', 'config', 'infrastructure', 'other'] as const;

const shortText = { type: 'string', maxLength: 190 } as const;

/** A change to record: the body of `POST …/changes` and the arguments of `changes_record`. */
export const changeEntrySchema = {
  type: 'object',
  properties: {
    /** When the change happened (ms since the epoch); now when left out. */
    time: epochMsSchema,
    kind: { type: 'string', enum: [...CHANGE_KINDS] },
    title: { type: 'string', minLength: 1, maxLength: 500 },
    service: shortText,
    environment: shortText,
    labels: {
      type: 'object',
      maxProperties: 50,
      propertyNames: { type: 'string', minLength: 1, maxLength: 100 },
      additionalProperties: { type: 'string', maxLength: 1000 },
    },
    url: { type: 'string', maxLength: 2048 },
  },
  required: ['kind', 'title'],
  additionalProperties: false,
} as const;

export type ChangeEntryInput = Infer<typeof changeEntrySchema>;

/** Which entries to read, and which page of them: the query of `GET …/changes` and the arguments of `changes_list`. */
export const changeQuerySchema = {
  type: 'object',
  properties: {
    ...paginationQuerySchema,
    from: epochMsSchema,
    to: epochMsSchema,
    kind: { type: 'string', enum: [...CHANGE_KINDS] },
    service: shortText,
  },
  additionalProperties: false,
} as const;

export type ChangeQuery = Infer<typeof changeQuerySchema>;

export function presentChange(row: ChangeRow) {
  return {
    id: row.id,
    connectorUid: row.connector_uid,
    time: Number(row.time),
    kind: row.kind,
    title: row.title,
    service: row.service,
    environment: row.environment,
    labels: JSON.parse(row.labels) as Record<string, string>,
    url: row.url,
    createdBy: row.created_by,
    created: Number(row.created_at),
  };
}

export type ChangeEntry = ReturnType<typeof presentChange>;

/** The connector `uid` of the org when it keeps change entries: 404 when missing, 400 for another type. Call after authorize(). */
export async function findChangesConnectorOrFail(db: Knex, orgId: string, uid: string): Promise<ConnectorRow> {
  const connector = await findConnectorOrFail(db, orgId, uid);
  if (connector.type !== 'changes') throw new BadRequestError(`connector ${uid} is of type ${connector.type}: only a changes connector keeps change entries`);
  return connector;
}

/** A link to the change (a pipeline run, a pull request): a web address, never javascript: or file:. */
function linkOf(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequestError('url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequestError('url must start with http:// or https://');
  return url.toString();
}

const optionalText = (value: string | undefined) => (value?.trim() ? value.trim() : null);

/** Records a change on a changes connector (see findChangesConnectorOrFail) and audits it. */
export async function recordChange(
  tx: Tx,
  actor: Actor,
  connector: ConnectorRow,
  input: ChangeEntryInput,
  createdBy: string,
  now: number,
): Promise<ChangeEntry> {
  const title = input.title.trim();
  if (!title) throw new BadRequestError('title must not be blank');
  const row: ChangeRow = {
    org_id: connector.org_id,
    connector_uid: connector.uid,
    id: newUid(),
    time: input.time ?? now,
    kind: input.kind,
    title,
    service: optionalText(input.service),
    environment: optionalText(input.environment),
    labels: JSON.stringify(input.labels ?? {}),
    url: input.url ? linkOf(input.url) : null,
    created_by: createdBy,
    created_at: now,
  };
  await insertChangeRow(tx, row);
  await recordAudit(
    tx.db,
    actor,
    {
      action: 'connector.change_recorded',
      orgId: connector.org_id,
      target: connectorAuditTarget(connector),
      metadata: { changeId: row.id, kind: row.kind, time: row.time, service: row.service, environment: row.environment },
    },
    now,
  );
  return presentChange((await findChangeRow(tx.db, connector.org_id, connector.uid, row.id))!);
}

/** One page of the connector's entries matching the query, newest first, with how many match. */
export async function findChanges(db: Knex, orgId: string, connectorUid: string, query: ChangeQuery): Promise<ListPage<'changes', ChangeEntry>> {
  const { page: _page, perpage: _perpage, ...filter } = query;
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) throw new BadRequestError('from must not be after to');
  const page = pageOf(query);
  return listPage('changes', page, await findChangePage(db, orgId, connectorUid, filter, page), presentChange);
}
