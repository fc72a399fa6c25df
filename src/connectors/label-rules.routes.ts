/**
 * `GET/PUT /api/connectors/:uid/label-rules`: which series of a metrics connector, or which log
 * streams of a logs connector, each principal may read,
 * `{rules: [{userId | serviceAccountId | teamId | role, selector}]}`. A PUT replaces the whole set
 * (`[]` removes every rule); each selector is a label-matcher set (`{namespace="checkout"}`, the
 * same in PromQL, LogQL and VictoriaLogs' stream filters), checked by the parser and saved in its
 * canonical form. Reading them needs `connectors.permissions:read` on the
 * connector, changing them `connectors.permissions:write` (a connector Admin); a change is audited
 * and reaches the policy data in its transaction, so the next read is restricted by it.
 */
import type { Knex } from 'knex';
import { replaceLabelRules, type LabelRule } from '../accesscontrol/policy-writer.ts';
import { recordAudit } from '../audit/writer.ts';
import { BadRequestError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import { uidParams } from '../http/resource-uid.ts';
import type { RouteModule } from '../http/route.ts';
import { findTeamsByIds } from '../teams/store.ts';
import { MAX_SELECTOR_LENGTH, parseSelector, renderSelector } from './label-rewrite.ts';
import { findLabelRules, findMemberKinds, type LabelRuleRow } from './store.ts';
import { RULED_TYPES, RULED_TYPES_ONLY } from './label-rules.ts';
import { connectorAuditTarget, connectorResource, findConnectorOrFail } from './target.ts';

const MAX_RULES = 100;
const RULE_ROLES = ['None', 'Viewer', 'Editor', 'Admin'] as const;
const idSchema = { type: 'string', minLength: 1, maxLength: 40 } as const;

const RULE_SCHEMA = {
  type: 'object',
  properties: {
    userId: idSchema,
    serviceAccountId: idSchema,
    teamId: idSchema,
    role: { type: 'string', enum: [...RULE_ROLES] },
    selector: { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH },
  },
  required: ['selector'],
  additionalProperties: false,
} as const;

const RULES_SCHEMA = {
  type: 'object',
  properties: { rules: { type: 'array', maxItems: MAX_RULES, items: RULE_SCHEMA } },
  required: ['rules'],
  additionalProperties: false,
} as const;

interface RuleInput {
  userId?: string;
  serviceAccountId?: string;
  teamId?: string;
  role?: (typeof RULE_ROLES)[number];
  selector: string;
}

const PRINCIPAL_FIELDS = { user: 'userId', service_account: 'serviceAccountId', team: 'teamId', role: 'role' } as const;

function presentRule(row: Pick<LabelRuleRow, 'principal_kind' | 'principal_id' | 'selector'>) {
  return { [PRINCIPAL_FIELDS[row.principal_kind]]: row.principal_id, selector: row.selector };
}

/**
 * The rules of a body, checked: each names exactly one principal of the org, its selector parses
 * (400 naming the rule: `body.rules[1].selector …`), and is kept in its canonical form.
 */
async function resolveRules(services: { db: Knex }, orgId: string, inputs: readonly RuleInput[]): Promise<LabelRule[]> {
  const memberIds = inputs.flatMap((rule) => [rule.userId, rule.serviceAccountId].filter((id): id is string => id !== undefined));
  const teamIds = inputs.flatMap((rule) => (rule.teamId ? [rule.teamId] : []));
  const [members, teams] = await Promise.all([findMemberKinds(services.db, orgId, memberIds), findTeamsByIds(services.db, teamIds)]);
  const orgTeams = new Set(teams.filter((team) => team.org_id === orgId).map((team) => team.id));
  return inputs.map((input, i) => {
    const where = `body.rules[${i}]`;
    const named = [input.userId, input.serviceAccountId, input.teamId, input.role].filter((value) => value !== undefined).length;
    if (named !== 1) throw new BadRequestError(`${where} must name exactly one of userId, serviceAccountId, teamId or role`);
    const selector = renderSelector(parseSelector(input.selector, `${where}.selector`));
    if (input.teamId !== undefined) {
      if (!orgTeams.has(input.teamId)) throw new BadRequestError(`${where}.teamId: team ${input.teamId} not found in this org`);
      return { principal: { kind: 'team', id: input.teamId }, selector };
    }
    if (input.role !== undefined) return { principal: { kind: 'role', id: input.role }, selector };
    const serviceAccount = input.serviceAccountId !== undefined;
    const id = (input.userId ?? input.serviceAccountId)!;
    const member = members.get(id);
    if (!member || member.serviceAccount !== serviceAccount) {
      throw new BadRequestError(
        `${where}.${serviceAccount ? 'serviceAccountId' : 'userId'}: ${serviceAccount ? 'service account' : 'user'} ${id} is not a member of this org`,
      );
    }
    return { principal: { kind: serviceAccount ? 'service_account' : 'user', id }, selector };
  });
}

const RULES_RESPONSE = {
  type: 'object',
  properties: {
    rules: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          userId: { type: 'string' },
          serviceAccountId: { type: 'string' },
          teamId: { type: 'string' },
          role: { type: 'string' },
          selector: { type: 'string' },
        },
        required: ['selector'],
      },
    },
  },
  required: ['rules'],
} as const;

export const connectorLabelRuleRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/connectors/:uid/label-rules',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    summary: "Lists a metrics or logs connector's label rules: which series or log streams each principal may read.",
    responses: { 200: RULES_RESPONSE },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('connectors.permissions:read', connectorResource(params.uid));
      await findConnectorOrFail(services.db, orgId, params.uid);
      ctx.body = { rules: (await findLabelRules(services.db, orgId, params.uid)).map(presentRule) };
    },
  });

  routes.add({
    method: 'put',
    path: '/api/connectors/:uid/label-rules',
    access: 'authenticated',
    level: 'org',
    params: uidParams,
    body: RULES_SCHEMA,
    summary:
      "Replaces a metrics or logs connector's label rules; once it has one, a reader no rule applies to is refused (org and connector Admins read everything).",
    responses: { 200: RULES_RESPONSE },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('connectors.permissions:write', connectorResource(params.uid));
      const now = services.clock.now();
      const saved = await services.transact(async (tx) => {
        const connector = await findConnectorOrFail(tx.db, orgId, params.uid, true);
        if (!RULED_TYPES.has(connector.type) && body.rules.length > 0) throw new BadRequestError(RULED_TYPES_ONLY);
        const rules = await resolveRules(tx, orgId, body.rules as RuleInput[]);
        await replaceLabelRules(tx, orgId, connector.uid, rules, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'connector.label_rules.updated',
            orgId,
            target: connectorAuditTarget(connector),
            metadata: {
              rules: rules.map((rule) => presentRule({ principal_kind: rule.principal.kind, principal_id: rule.principal.id, selector: rule.selector })),
            },
          },
          now,
        );
        return findLabelRules(tx.db, orgId, connector.uid);
      });
      ctx.body = { rules: saved.map(presentRule) };
    },
  });
};
