/**
 * Connectors of the active org (`/api/connectors…`), modelled on Grafana's data-source API:
 * create, list (only what the caller may read), read, update (optimistic locking on `version`,
 * secrets kept unless given again), delete. Credentials are sealed with SECRET_KEY and never
 * answered, audited or echoed in an error. The connectivity test, queries and the read-only
 * proxy live in backend.routes.ts, the entries of a `changes` connector in changes.routes.ts.
 */
import { recordAudit } from '../audit/writer.ts';
import { newUid } from '../db/ids.ts';
import { BadRequestError, ConflictError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import { resourceUidSchema, uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { warmQueryGrammars } from './grammar-warmup.ts';
import { nameSchema, versionSchema } from '../http/schemas.ts';
import { subjectOf } from '../http/subject.ts';
import { parseBackendUrl } from '../outbound/client.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import { grantDefaultConnectorAccess } from '../permissions/resource-grants.ts';
import type { Services } from '../services.ts';
import { connectorBackendRoutes } from './backend.routes.ts';
import { connectorChangeRoutes } from './changes.routes.ts';
import { connectorLabelRuleRoutes } from './label-rules.routes.ts';
import { CONNECTOR_SCHEMA, presentConnector, sealSecrets, secretsOf } from './presenter.ts';
import { assertOpsUrl, opsSettings } from '../ops/settings.ts';
import { assertNoBackendChoice, connectorAuth, logBackendOf, mergeSecrets, type Secrets } from './settings.ts';
import {
  deleteConnector,
  findConnector,
  findConnectorByName,
  findConnectorsByUids,
  findConnectorUids,
  insertConnector,
  updateConnector,
  type ConnectorRow,
} from './store.ts';
import { CONNECTOR_TYPES, connectorAuditTarget, connectorResource, findConnectorOrFail, SIGNAL_TYPES, type ConnectorType } from './target.ts';
import { listPageSchema } from '../http/responses.ts';

/** Settings are read back whole on every use: kept small. */
const MAX_SETTINGS_BYTES = 64 * 1024;

const settingsSchemas = {
  url: { type: 'string', maxLength: 2048 },
  access: { type: 'string', enum: ['proxy'] },
  isDefault: { type: 'boolean' },
  jsonData: {
    type: 'object',
    maxProperties: 200,
    description:
      "The backend's settings, in Grafana's data-source field names (auth, custom headers, TLS); a logstore connector's `backend`: `loki` (the default) or `victorialogs`.",
  },
  secureJsonData: { type: 'object', maxProperties: 200, additionalProperties: { type: 'string', maxLength: MAX_SETTINGS_BYTES } },
} as const;

function connectorName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new BadRequestError('body.name must not be blank');
  return trimmed;
}

/** The URL a type needs: a backend's http(s) URL, or none for `changes` (entries are recorded by hand). */
function connectorUrl(type: ConnectorType, url: string | undefined): string {
  if (type === 'changes') {
    if (url) throw new BadRequestError('body.url is not used by a changes connector: leave it out');
    return '';
  }
  if (!url) throw new BadRequestError(`body.url is required for a ${type} connector`);
  const parsed = parseBackendUrl(url, 'body.url').toString();
  if (type === 'kubernetes') assertOpsUrl(parsed);
  return parsed;
}

/**
 * Throws 400 when the settings are too large or cannot work: their auth, a logs connector's
 * backend (`jsonData.backend`), and a kubernetes connector's allowlists (the message names fields, never values).
 */
function checkSettings(type: ConnectorType, jsonData: Record<string, unknown>, secrets: Secrets): void {
  if (JSON.stringify(jsonData).length > MAX_SETTINGS_BYTES) throw new BadRequestError(`body.jsonData is larger than ${MAX_SETTINGS_BYTES} bytes`);
  if (JSON.stringify(secrets).length > MAX_SETTINGS_BYTES) throw new BadRequestError(`body.secureJsonData is larger than ${MAX_SETTINGS_BYTES} bytes`);
  if (type === 'logstore') logBackendOf(jsonData);
  else assertNoBackendChoice(jsonData, type);
  if (type === 'kubernetes') opsSettings(jsonData, secrets);
  else connectorAuth(jsonData, secrets);
}

const duplicateName = (name: string) => new ConflictError(`a connector named ${name} already exists in this org`);

const CONNECTOR_PAGE_SCHEMA = listPageSchema('connectors', CONNECTOR_SCHEMA);

const CONNECTOR_DELETED_SCHEMA = {
  type: 'object',
  properties: { uid: { type: 'string' }, name: { type: 'string' }, message: { type: 'string' } },
  required: ['uid', 'name', 'message'],
} as const;

const present = (connector: ConnectorRow, services: Services) => presentConnector(connector, Object.keys(secretsOf(connector, services.secretBox)));

export const connectorRoutes: RouteModule = (routes) => {
  // the query paths read queries under label rules within a parse budget, which holds once the parsers' code is compiled
  warmQueryGrammars();
  routes.add({
    method: 'post',
    path: '/api/connectors',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: {
        uid: resourceUidSchema,
        name: nameSchema,
        type: { type: 'string', enum: Object.keys(CONNECTOR_TYPES) as ConnectorType[] },
        ...settingsSchemas,
      },
      required: ['name', 'type'],
      additionalProperties: false,
    },
    summary: 'Creates a connector; its secrets are sealed and never answered.',
    responses: { 201: CONNECTOR_SCHEMA },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      await authorize('connectors:create');
      const name = connectorName(body.name);
      const type = body.type as ConnectorType;
      const url = connectorUrl(type, body.url);
      const jsonData = body.jsonData ?? {};
      const secrets = mergeSecrets({}, body.secureJsonData as Secrets | undefined);
      checkSettings(type, jsonData, secrets);
      const now = services.clock.now();
      const uid = body.uid ?? newUid();
      const created = await services.transact(async (tx) => {
        await enforceOrgQuota(tx, services.config, orgId, 'connectors', now);
        if (await findConnectorByName(tx.db, orgId, name)) throw duplicateName(name);
        if (await findConnector(tx.db, orgId, uid)) throw new ConflictError(`a connector with uid ${uid} already exists in this org`);
        const content = {
          name,
          type,
          signalType: CONNECTOR_TYPES[type],
          url,
          access: body.access ?? 'proxy',
          isDefault: body.isDefault ?? false,
          jsonData,
          sealedSecrets: sealSecrets(secrets, services.secretBox),
        };
        await insertConnector(tx, orgId, uid, content, principal.user.id, now);
        await grantDefaultConnectorAccess(tx, orgId, uid, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'connector.created', orgId, target: connectorAuditTarget({ uid, name }), metadata: { type, url, isDefault: content.isDefault } },
          now,
        );
        return (await findConnector(tx.db, orgId, uid))!;
      });
      ctx.status = 201;
      ctx.body = present(created, services);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/connectors',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      properties: {
        ...paginationQuerySchema,
        query: { type: 'string', maxLength: 190 },
        signalType: { type: 'string', enum: [...SIGNAL_TYPES] },
        type: { type: 'string', enum: Object.keys(CONNECTOR_TYPES) as ConnectorType[] },
      },
      additionalProperties: false,
    },
    summary: 'Lists the connectors the caller may read.',
    responses: { 200: CONNECTOR_PAGE_SCHEMA },
    async handler({ ctx, query, principal, orgId, services, authorize }) {
      await authorize('connectors:read');
      const page = pageOf(query);
      const uids = await findConnectorUids(services.db, orgId, { signalType: query.signalType, type: query.type, search: query.query?.trim() });
      // One policy call for every match, then the page: totalCount counts what the caller may read.
      const readable = await services.engine.filter({
        subject: subjectOf(principal),
        org_id: orgId,
        action: 'connectors:read',
        resources: uids.map(connectorResource),
      });
      const readableUids = readable.sort((a, b) => a - b).map((index) => uids[index]!);
      const rows = await findConnectorsByUids(services.db, orgId, readableUids.slice(page.offset, page.offset + page.limit));
      ctx.body = { totalCount: readableUids.length, connectors: rows.map((row) => present(row, services)), page: page.page, perPage: page.perPage };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/connectors/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Reads a connector (which secrets are set, never their values).',
    responses: { 200: CONNECTOR_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('connectors:read', connectorResource(params.uid));
      ctx.body = present(await findConnectorOrFail(services.db, orgId, params.uid), services);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/connectors/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: {
      type: 'object',
      properties: {
        name: nameSchema,
        type: { type: 'string', enum: Object.keys(CONNECTOR_TYPES) as ConnectorType[] },
        version: versionSchema(0),
        ...settingsSchemas,
      },
      additionalProperties: false,
    },
    summary: 'Updates a connector (optimistic locking on version); secrets left out are kept.',
    responses: { 200: CONNECTOR_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('connectors:write', connectorResource(params.uid));
      const now = services.clock.now();
      const saved = await services.transact(async (tx) => {
        const current = await findConnectorOrFail(tx.db, orgId, params.uid, true);
        if (body.version !== undefined && body.version !== current.version) {
          throw new ConflictError(`the connector has been changed by someone else: version ${current.version}, not ${body.version}`);
        }
        const type = current.type as ConnectorType;
        if (body.type !== undefined && body.type !== type)
          throw new BadRequestError(`body.type cannot change (the connector is ${type}): make a new connector`);
        const name = body.name === undefined ? current.name : connectorName(body.name);
        if (name.toLowerCase() !== current.name.toLowerCase() && (await findConnectorByName(tx.db, orgId, name))) throw duplicateName(name);
        const url = body.url === undefined ? current.url : connectorUrl(type, body.url);
        const jsonData = (body.jsonData ?? JSON.parse(current.json_data ?? '{}')) as Record<string, unknown>;
        const secrets = mergeSecrets(secretsOf(current, services.secretBox), body.secureJsonData as Secrets | undefined);
        checkSettings(type, jsonData, secrets);
        const content = {
          name,
          type,
          signalType: current.signal_type,
          url,
          access: body.access ?? current.access,
          isDefault: body.isDefault ?? current.default_for !== null,
          jsonData,
          sealedSecrets: sealSecrets(secrets, services.secretBox),
        };
        if (!(await updateConnector(tx, current, content, principal.user.id, now))) {
          throw new ConflictError('the connector has been changed by someone else: read it again');
        }
        const changed = ['name', 'url', 'access', 'isDefault', 'jsonData', 'secureJsonData'].filter((field) => field in body);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'connector.updated', orgId, target: connectorAuditTarget({ uid: current.uid, name }), metadata: { version: current.version + 1, changed } },
          now,
        );
        return (await findConnector(tx.db, orgId, current.uid))!;
      });
      ctx.body = present(saved, services);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/connectors/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Deletes a connector and every grant on it.',
    responses: { 200: CONNECTOR_DELETED_SCHEMA },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      await authorize('connectors:delete', connectorResource(params.uid));
      const now = services.clock.now();
      const connector = await services.transact(async (tx) => {
        const current = await findConnectorOrFail(tx.db, orgId, params.uid, true);
        await deleteConnector(tx, current);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'connector.deleted', orgId, target: connectorAuditTarget(current), metadata: { type: current.type } },
          now,
        );
        return current;
      });
      ctx.body = { uid: connector.uid, name: connector.name, message: `Connector ${connector.name} deleted` };
    },
  });

  connectorBackendRoutes(routes);
  connectorChangeRoutes(routes);
  connectorLabelRuleRoutes(routes);
};
