/**
 * Alert rules of the active org through Grafana's provisioning API
 * (`/api/v1/provisioning/alert-rules…`). A rule lives in a folder and its permissions are the
 * folder's (the policy's candidate scopes for `alert.rules` run up the folder chain); moving a
 * rule needs write on it and create in the destination folder. Reading, listing, creating and
 * changing a rule also need query on every connector its queries read.
 */
import type { Knex } from 'knex';
import type { Requirement, ResourceRef } from '../authz/types.ts';
import { recordAudit } from '../audit/writer.ts';
import { connectorResource } from '../connectors/target.ts';
import { actorOf } from '../http/actor.ts';
import { newUid } from '../db/ids.ts';
import { findDestinationFolder, folderResource, folderUidOf } from '../folders/target.ts';
import { lockTitlesIn } from '../folders/store.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import type { Infer } from '../http/guard.ts';
import { pageOf, paginationQuerySchema } from '../http/pagination.ts';
import { resourceUidSchema, uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { MAX_EPOCH_SECONDS } from '../http/schemas.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import { ALERT_RULE_SCHEMA, presentAlertRule } from './presenter.ts';
import { alertRuleAuditTarget, alertRuleResource } from './target.ts';
import {
  deleteAlertRule,
  findAlertRule,
  findAlertRuleByTitle,
  findAlertRuleDefinitions,
  findAlertRulesByUids,
  insertAlertRule,
  updateAlertRule,
  type AlertRuleContent,
  type AlertRuleRow,
} from './store.ts';
import { listPageSchema } from '../http/responses.ts';

/** A relative time range's end, in seconds before the evaluation: no further back than a Date reaches. */
const secondsAgoSchema = { type: 'integer', minimum: 0, maximum: MAX_EPOCH_SECONDS } as const;

const textMap = { type: 'object', additionalProperties: { type: 'string', maxLength: 4000 }, maxProperties: 100 } as const;

const ruleProperties = {
  title: { type: 'string', minLength: 1, maxLength: 190 },
  folderUID: { type: 'string', minLength: 1, maxLength: 40 },
  ruleGroup: { type: 'string', minLength: 1, maxLength: 190 },
  condition: { type: 'string', minLength: 1, maxLength: 40 },
  data: {
    type: 'array',
    minItems: 1,
    maxItems: 100,
    items: {
      type: 'object',
      properties: {
        refId: { type: 'string', minLength: 1, maxLength: 40 },
        datasourceUid: { type: 'string', minLength: 1, maxLength: 40 },
        queryType: { type: 'string', maxLength: 190 },
        relativeTimeRange: {
          type: 'object',
          properties: { from: secondsAgoSchema, to: secondsAgoSchema },
          required: ['from', 'to'],
          additionalProperties: false,
        },
        model: { type: 'object' },
      },
      required: ['refId', 'datasourceUid', 'model'],
      additionalProperties: false,
    },
  },
  // Go durations as Grafana writes them: 0, 30s, 5m, 1h30m…
  for: { type: 'string', pattern: '^(0|([0-9]+(ms|s|m|h|d|w|y))+)$', default: '0s' },
  labels: textMap,
  annotations: textMap,
  noDataState: { type: 'string', enum: ['Alerting', 'NoData', 'OK'], default: 'NoData' },
  execErrState: { type: 'string', enum: ['Alerting', 'Error', 'OK'], default: 'Error' },
  isPaused: { type: 'boolean', default: false },
} as const;

const REQUIRED = ['title', 'folderUID', 'ruleGroup', 'condition', 'data'] as const;

const ruleBody = { type: 'object', properties: { uid: resourceUidSchema, ...ruleProperties }, required: REQUIRED, additionalProperties: false } as const;
const ruleUpdateBody = { type: 'object', properties: ruleProperties, required: REQUIRED, additionalProperties: false } as const;

type RuleFields = Infer<typeof ruleUpdateBody>;

/**
 * The policy target of a rule addressed by uid. The policy reaches a rule through its folder
 * (the index), so a uid it does not know has no folder to inherit from: for such a uid the
 * caller is asked for the action on any scope, and one who may act on some rule learns it is
 * missing (404), as they would for a dashboard.
 */
async function addressedRule(db: Knex, orgId: string, uid: string): Promise<{ rule: AlertRuleRow | undefined; resource: ResourceRef | undefined }> {
  const rule = await findAlertRule(db, orgId, uid);
  return { rule, resource: rule && alertRuleResource(rule.uid) };
}
/** Grafana's expression pseudo-datasource (math, reduce, threshold over the other queries): no connector. */
const EXPRESSION_DATASOURCES = new Set(['__expr__', '-100']);

/**
 * Reading or saving a rule also needs `connectors:query` on every connector its queries read (as
 * Grafana refuses a rule querying a data source one cannot query); asked in the same decision.
 */
function connectorRequirements(queries: ReadonlyArray<{ datasourceUid: string }>): Requirement[] {
  const uids = new Set(queries.map((query) => query.datasourceUid).filter((uid) => !EXPRESSION_DATASOURCES.has(uid)));
  return [...uids].map((uid) => ({ action: 'connectors:query', resource: connectorResource(uid) }));
}

function storedQueries(rule: Pick<AlertRuleRow, 'data'>): Array<{ datasourceUid: string }> {
  const { data } = (rule.data ? JSON.parse(rule.data) : {}) as { data?: Array<{ datasourceUid: string }> };
  return data ?? [];
}

const storedRequirements = (rule: Pick<AlertRuleRow, 'data'>) => connectorRequirements(storedQueries(rule));

/** What a body asks for, checked beyond the schema: a condition naming one query, refIds unique. */
function ruleContent(body: RuleFields, folderUid: string): AlertRuleContent {
  const title = body.title.trim();
  if (!title) throw new BadRequestError('body.title must not be blank');
  const refIds = body.data.map((query) => query.refId);
  if (new Set(refIds).size !== refIds.length) throw new BadRequestError('body.data: every query needs its own refId');
  if (!refIds.includes(body.condition)) throw new BadRequestError(`body.condition must be the refId of one of body.data (${refIds.join(', ')})`);
  const { title: _title, folderUID: _folder, ruleGroup, ...definition } = body;
  return { title, folderUid, ruleGroup, definition };
}

/** The folder a rule goes to: it must exist, and a rule always has one (not the root). Locked for the title check (lockTitlesIn). */
async function ruleFolder(db: Knex, orgId: string, folderUid: string): Promise<string> {
  await lockTitlesIn(db, orgId, folderUidOf(folderUid));
  const folder = await findDestinationFolder(db, orgId, folderUid, 'body.folderUID');
  if (!folder) throw new BadRequestError('body.folderUID: an alert rule lives in a folder, not in the root');
  return folder.uid;
}

async function assertTitleFree(db: Knex, orgId: string, content: AlertRuleContent, own?: string): Promise<void> {
  const namesake = await findAlertRuleByTitle(db, orgId, content.folderUid, content.title);
  if (namesake && namesake.uid !== own) throw new ConflictError(`an alert rule titled ${content.title} already exists in folder ${content.folderUid}`);
}

const ruleNotFound = (uid: string) => new NotFoundError(`alert rule ${uid} not found`);

async function findRuleOrFail(db: Knex, orgId: string, uid: string, lock = false): Promise<AlertRuleRow> {
  const rule = await findAlertRule(db, orgId, uid, lock);
  if (!rule) throw ruleNotFound(uid);
  return rule;
}

const ALERT_RULE_PAGE_SCHEMA = listPageSchema('alertRules', ALERT_RULE_SCHEMA);

export const alertRuleRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/v1/provisioning/alert-rules',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      properties: { ...paginationQuerySchema, folderUID: { type: 'string', maxLength: 40 } },
      additionalProperties: false,
    },
    summary: 'Lists the alert rules (of folderUID) the caller may read, connectors included.',
    responses: { 200: ALERT_RULE_PAGE_SCHEMA },
    async handler({ ctx, query, orgId, services, authorize, filter }) {
      await authorize('alert.rules:read');
      const page = pageOf(query);
      const rules = await findAlertRuleDefinitions(services.db, orgId, folderUidOf(query.folderUID) ?? undefined);
      // Rules whose connectors the caller cannot query are left out, as a single read refuses them.
      const readable = await filter('alert.rules:read', rules, (rule) => alertRuleResource(rule.uid), storedRequirements);
      const readableUids = readable.map((rule) => rule.uid);
      const rows = await findAlertRulesByUids(services.db, orgId, readableUids.slice(page.offset, page.offset + page.limit));
      ctx.body = { totalCount: readableUids.length, alertRules: rows.map(presentAlertRule), page: page.page, perPage: page.perPage };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/v1/provisioning/alert-rules',
    access: 'authenticated',
    level: 'org',
    body: ruleBody,
    summary: 'Creates an alert rule in a folder.',
    responses: { 201: ALERT_RULE_SCHEMA },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      await authorize('alert.rules:create', folderResource(body.folderUID), { requires: connectorRequirements(body.data) });
      const uid = body.uid ?? newUid();
      const { uid: _uid, ...fields } = body;
      const now = services.clock.now();
      const rule = await services.transact(async (tx) => {
        await enforceOrgQuota(tx, services.config, orgId, 'alert_rules', now);
        const content = ruleContent(fields, await ruleFolder(tx.db, orgId, body.folderUID));
        if (await findAlertRule(tx.db, orgId, uid)) throw new ConflictError(`an alert rule with uid ${uid} already exists`);
        await assertTitleFree(tx.db, orgId, content);
        await insertAlertRule(tx, orgId, uid, content, principal.user.id, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'alert_rule.created',
            orgId,
            target: alertRuleAuditTarget({ uid, title: content.title }),
            metadata: { folderUid: content.folderUid, ruleGroup: content.ruleGroup },
          },
          now,
        );
        return (await findAlertRule(tx.db, orgId, uid))!;
      });
      ctx.status = 201;
      ctx.body = presentAlertRule(rule);
    },
  });

  routes.add({
    method: 'get',
    path: '/api/v1/provisioning/alert-rules/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Reads an alert rule.',
    responses: { 200: ALERT_RULE_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      const { rule, resource } = await addressedRule(services.db, orgId, params.uid);
      await authorize('alert.rules:read', resource, rule && { requires: storedRequirements(rule) });
      if (!rule) throw ruleNotFound(params.uid);
      ctx.body = presentAlertRule(rule);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/v1/provisioning/alert-rules/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: ruleUpdateBody,
    summary: 'Replaces an alert rule as its next version (a new folderUID moves it).',
    responses: { 200: ALERT_RULE_SCHEMA },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      const { rule: existing, resource } = await addressedRule(services.db, orgId, params.uid);
      // A move also creates the rule in its new folder: the same decision asks alert.rules:create there.
      const moving = !!existing && folderUidOf(body.folderUID) !== existing.folder_uid;
      // The connectors it reads now and those it will read: a rule one may not read is not replaced either.
      const requires = connectorRequirements([...(existing ? storedQueries(existing) : []), ...body.data]);
      await authorize('alert.rules:write', resource, moving ? { destination: folderResource(body.folderUID), requires } : { requires });
      if (!existing) throw ruleNotFound(params.uid);
      const now = services.clock.now();
      const rule = await services.transact(async (tx) => {
        const current = await findRuleOrFail(tx.db, orgId, params.uid, true);
        const content = ruleContent(body, await ruleFolder(tx.db, orgId, body.folderUID));
        // Moved by someone else since the check above, which then judged another move.
        if (current.folder_uid !== existing.folder_uid) throw new ConflictError(`alert rule ${current.uid} was moved meanwhile: load it again`);
        await assertTitleFree(tx.db, orgId, content, current.uid);
        await updateAlertRule(tx, current, content, principal.user.id, now);
        const metadata = {
          folderUid: content.folderUid,
          ruleGroup: content.ruleGroup,
          version: current.version + 1,
          ...(current.folder_uid !== content.folderUid && { previousFolderUid: current.folder_uid }),
        };
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'alert_rule.updated', orgId, target: alertRuleAuditTarget({ uid: current.uid, title: content.title }), metadata },
          now,
        );
        return (await findAlertRule(tx.db, orgId, current.uid))!;
      });
      ctx.body = presentAlertRule(rule);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/v1/provisioning/alert-rules/:uid',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: 'Deletes an alert rule and every grant on it.',
    responses: { 204: null },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      const { rule: existing, resource } = await addressedRule(services.db, orgId, params.uid);
      await authorize('alert.rules:delete', resource);
      if (!existing) throw ruleNotFound(params.uid);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const rule = await findRuleOrFail(tx.db, orgId, params.uid, true);
        await deleteAlertRule(tx, rule);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'alert_rule.deleted', orgId, target: alertRuleAuditTarget(rule), metadata: { folderUid: rule.folder_uid, ruleGroup: rule.rule_group } },
          now,
        );
      });
      ctx.status = 204;
    },
  });
};
