/**
 * Policy as code, for the people who audit it: the org's data document as the policy reads it,
 * a decision explained, and who holds an action on a resource. Each answer comes from the
 * policy itself (a decision per subject, per team, role and org role for who-can), never from a
 * second model of it in TypeScript.
 */
import type { Knex } from 'knex';
import { ORG_ROLES, type LabelRulesAnswer, type OrgDocument, type ResourceRef, type Subject } from '../authz/types.ts';
import { findConnector } from '../connectors/store.ts';
import { findDashboard } from '../dashboards/store.ts';
import { NotFoundError, BadRequestError } from '../errors.ts';
import { findFolder } from '../folders/store.ts';
import type { RouteModule } from '../http/route.ts';
import { ownRecord, subjectOf } from '../http/subject.ts';
import { findUserById } from '../identity/users.store.ts';
import { isOrgMember } from '../orgs/store.ts';
import { findTeamInOrg, findTeamsByIds } from '../teams/store.ts';
import { ACTIONS, type Action } from '../authz/actions.ts';
import {
  DECISION_SCHEMA,
  grantsOf,
  HELD_GRANT_SCHEMA,
  LABEL_RULES_SCHEMA,
  labelRulesConnector,
  MEMBER_GRANT_SCHEMA,
  redactDecision,
  resourceProblem,
  ROLE_OWN_GRANT_SCHEMA,
  type Grant,
} from './policy-explain.ts';
import { findOrgMemberUsers } from './policy.store.ts';
import { subjectOfUser } from './roles.ts';

const actionSchema = { type: 'string', enum: ACTIONS } as const;

const resourceSchema = {
  oneOf: [
    {
      type: 'object',
      properties: { kind: { type: 'string', minLength: 1 }, uid: { type: 'string', minLength: 1 } },
      required: ['kind', 'uid'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { kind: { type: 'string', minLength: 1 }, id: { type: 'string', minLength: 1 } },
      required: ['kind', 'id'],
      additionalProperties: false,
    },
    { type: 'object', properties: { scope: { type: 'string', minLength: 1 } }, required: ['scope'], additionalProperties: false },
  ],
} as const;

/** The kinds who-can answers for: how each is found in the org and named to the policy. */
const WHO_CAN_KINDS = {
  folders: { resource: (uid: string): ResourceRef => ({ kind: 'folders', uid }), exists: findFolder },
  dashboards: { resource: (uid: string): ResourceRef => ({ kind: 'dashboards', uid }), exists: findDashboard },
  connectors: { resource: (uid: string): ResourceRef => ({ kind: 'connectors', uid }), exists: findConnector },
  // alert rules are folder-scoped: their permissions are those of the folder that holds them
  'alert.rules': { resource: (uid: string): ResourceRef => ({ kind: 'folders', uid }), exists: findFolder },
  teams: { resource: (id: string): ResourceRef => ({ kind: 'teams', id }), exists: findTeamInOrg },
} satisfies Record<string, { resource(uid: string): ResourceRef; exists(db: Knex, orgId: string, uid: string): Promise<unknown> }>;

type WhoCanKind = keyof typeof WHO_CAN_KINDS;
const WHO_CAN_KIND_NAMES = Object.keys(WHO_CAN_KINDS) as WhoCanKind[];

interface Holder {
  userId: string;
  login: string;
  name: string;
  grants: Grant[];
  labelRules?: LabelRulesAnswer;
}

/** A grant held by a team, a role or an org role itself: what it holds where, without a member's path to it. */
function held(grant: Grant): Grant {
  if (!('roleUid' in grant)) return grant;
  const { via: _via, ...rest } = grant;
  return rest;
}

/** A role's own grant: the role is the entry's, so only what it holds where. */
function withoutRole(grant: Grant): Grant {
  if (!('roleUid' in grant)) return grant;
  const { roleUid: _role, ...rest } = grant;
  return rest as Grant;
}

/**
 * Who-can asks the policy of each team, role and org role as of a member holding only that: a
 * stand-in member per holder, under an id no user can have, in a copy of the org's document.
 */
function withStandIns(document: OrgDocument): { document: OrgDocument; standIns: StandIn[] } {
  const members = { ...document.members };
  const standIns: StandIn[] = [];
  const add = (standIn: StandIn, member: OrgDocument['members'][string]) => {
    members[standIn.id] = member;
    standIns.push(standIn);
  };
  for (const teamId of Object.keys(document.teams))
    add({ id: `whocan:team:${teamId}`, kind: 'team', key: teamId }, { role: 'None', teams: [teamId], roles: [] });
  for (const uid of Object.keys(document.roles)) add({ id: `whocan:role:${uid}`, kind: 'role', key: uid }, { role: 'None', teams: [], roles: [uid] });
  for (const role of ORG_ROLES.filter((role) => role !== 'None'))
    add({ id: `whocan:org-role:${role}`, kind: 'orgRole', key: role }, { role, teams: [], roles: [] });
  return { document: { ...document, members }, standIns };
}

interface StandIn {
  id: string;
  kind: 'team' | 'role' | 'orgRole';
  key: string;
}

const strings = { type: 'array', items: { type: 'string' } } as const;
const mapOf = <S>(value: S) => ({ type: 'object', additionalProperties: value }) as const;
const setOf = mapOf({ const: true } as const);

/** The org's data document (OrgDocument) as the policy reads it. */
const POLICY_DATA_SCHEMA = {
  type: 'object',
  properties: {
    org_id: { type: ['string', 'null'] },
    settings: { type: 'object', properties: { legacy_acl_enabled: { type: 'boolean' } }, required: ['legacy_acl_enabled'] },
    members: mapOf({
      type: 'object',
      properties: { role: { enum: ORG_ROLES }, teams: strings, roles: strings },
      required: ['role', 'teams', 'roles'],
    } as const),
    teams: mapOf({ type: 'object', properties: { roles: strings }, required: ['roles'] } as const),
    builtin_roles: { type: 'object', propertyNames: { enum: ORG_ROLES }, additionalProperties: strings },
    // role uid -> action -> scope -> true
    roles: mapOf(mapOf(setOf)),
    folders: mapOf({ type: 'object', properties: { scopes: strings }, required: ['scopes'] } as const),
    dashboards: mapOf({ type: 'object', properties: { folder: { type: 'string' } }, required: ['folder'] } as const),
    alert_rules: mapOf({ type: 'object', properties: { folder: { type: 'string' } }, required: ['folder'] } as const),
    // scope -> principal -> level
    legacy_acl: mapOf(mapOf({ type: 'integer' } as const)),
    chat_agents: mapOf({ type: 'object', properties: { tools: setOf }, required: ['tools'] } as const),
    // connector uid -> principal key -> selectors
    label_rules: mapOf(mapOf(strings)),
  },
  required: [
    'org_id',
    'settings',
    'members',
    'teams',
    'builtin_roles',
    'roles',
    'folders',
    'dashboards',
    'alert_rules',
    'legacy_acl',
    'chat_agents',
    'label_rules',
  ],
} as const;

const holderSchema = {
  type: 'object',
  properties: {
    userId: { type: 'string' },
    login: { type: 'string' },
    name: { type: 'string' },
    grants: { type: 'array', items: MEMBER_GRANT_SCHEMA },
    labelRules: LABEL_RULES_SCHEMA,
  },
  required: ['userId', 'login', 'name', 'grants'],
} as const;

/** The selectors of the label rules that name a team or an org role on a connector (connectors:query only). */
const labelSelectorsSchema = {
  type: 'array',
  items: { type: 'string' },
  description: 'For connectors:query on a connector with label rules: the selectors of the rules naming this holder.',
} as const;

/** Who-can's answer: the action, the resource as the policy names it, and each kind of holder with the grants that give it. */
const WHO_CAN_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string' },
    resource: {
      oneOf: [
        { type: 'object', properties: { kind: { type: 'string' }, uid: { type: 'string' } }, required: ['kind', 'uid'] },
        { type: 'object', properties: { kind: { type: 'string' }, id: { type: 'string' } }, required: ['kind', 'id'] },
      ],
    },
    users: { type: 'array', items: holderSchema },
    serviceAccounts: { type: 'array', items: holderSchema },
    teams: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          teamId: { type: 'string' },
          name: { type: 'string' },
          grants: { type: 'array', items: HELD_GRANT_SCHEMA },
          labelSelectors: labelSelectorsSchema,
        },
        required: ['teamId', 'name', 'grants'],
      },
    },
    roles: {
      type: 'array',
      items: {
        type: 'object',
        properties: { uid: { type: 'string' }, grants: { type: 'array', items: ROLE_OWN_GRANT_SCHEMA } },
        required: ['uid', 'grants'],
      },
    },
    orgRoles: {
      type: 'array',
      items: {
        type: 'object',
        properties: { role: { enum: ORG_ROLES }, grants: { type: 'array', items: HELD_GRANT_SCHEMA }, labelSelectors: labelSelectorsSchema },
        required: ['role', 'grants'],
      },
    },
  },
  required: ['action', 'resource', 'users', 'serviceAccounts', 'teams', 'roles', 'orgRoles'],
} as const;

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const policyRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/access-control/policy-data',
    access: 'authenticated',
    level: 'org',
    summary: "The data document the policy decides the active org's requests against.",
    responses: { 200: POLICY_DATA_SCHEMA },
    async handler({ ctx, orgId, services, authorize }) {
      await authorize('policy.data:read', { kind: 'orgs', id: orgId });
      ctx.body = await services.engine.document(orgId);
    },
  });

  routes.add({
    method: 'post',
    path: '/api/access-control/evaluate',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: { action: actionSchema, resource: resourceSchema, userId: { type: 'string', minLength: 1 } },
      required: ['action'],
      additionalProperties: false,
    },
    summary: 'What the policy decides for the caller, or another user of the org, doing an action, and why.',
    responses: { 200: DECISION_SCHEMA },
    async handler({ ctx, body, principal, orgId, services, authorize, explain, filter }) {
      const aboutAnother = body.userId !== undefined && body.userId !== principal.user.id;
      // The right to ask is the right to read that user's permissions: everyone may read their own.
      await authorize('users.permissions:read', aboutAnother ? { kind: 'users', id: body.userId! } : ownRecord(principal));
      let subjectId = principal.user.id;
      let subject: Subject | undefined;
      let labelRulesSubject = subjectOf(principal);
      if (aboutAnother) {
        const user = await findUserById(services.db, body.userId!);
        if (!user || !(await isOrgMember(services.db, orgId, user.id))) throw new NotFoundError(`user ${body.userId} not found in this org`);
        subjectId = user.id;
        subject = subjectOfUser(user);
        labelRulesSubject = subject;
      }
      const resource = body.resource as ResourceRef | undefined;
      const decision = await explain(body.action, resource, subject);
      const problem = resourceProblem(decision);
      if (problem) throw new BadRequestError(`resource: ${problem}`);
      const explained = await redactDecision(decision, subjectId, resource, (action, items) => filter(action, items, (item) => item));
      // a query of a connector: the label rules its reads would be given
      const connector = labelRulesConnector(body.action as Action, resource);
      const labelRules = connector && (await services.engine.explainLabelRules({ subject: labelRulesSubject, org_id: orgId, resource: connector }));
      ctx.body = labelRules ? { ...explained, labelRules } : explained;
    },
  });

  routes.add({
    method: 'get',
    path: '/api/access-control/resources/:kind/:uid/principals',
    access: 'authenticated',
    level: 'org',
    params: {
      type: 'object',
      properties: { kind: { type: 'string', enum: WHO_CAN_KIND_NAMES }, uid: { type: 'string', minLength: 1 } },
      required: ['kind', 'uid'],
      additionalProperties: false,
    },
    query: { type: 'object', properties: { action: actionSchema }, required: ['action'], additionalProperties: false },
    summary: 'Who holds an action on a resource of the active org: users, service accounts, teams, roles and org roles, with their grants.',
    responses: { 200: WHO_CAN_SCHEMA },
    async handler({ ctx, params, query, orgId, services, authorize }) {
      // Everything the answer shows is in the org's policy data: who may export it may ask.
      await authorize('policy.data:read', { kind: 'orgs', id: orgId });
      const kind = WHO_CAN_KINDS[params.kind as WhoCanKind];
      if (!(await kind.exists(services.db, orgId, params.uid))) throw new NotFoundError(`${params.kind} ${params.uid} not found`);
      const resource = kind.resource(params.uid);
      const action = query.action as Action;

      const [document, members] = await Promise.all([services.engine.document(orgId), findOrgMemberUsers(services.db, orgId)]);
      const hypothetical = withStandIns(document);
      const subjects = [
        ...members.map(subjectOfUser),
        ...hypothetical.standIns.map((standIn): Subject => ({ id: standIn.id, kind: 'user', server_admin: false, disabled: false })),
      ];
      const decisions = await services.engine.explainAgainst(
        hypothetical.document,
        subjects.map((subject) => ({ subject, org_id: orgId, action, resource })),
      );
      const grantsOfSubject = (index: number) => grantsOf(decisions[index]!.reasons, hypothetical.document, subjects[index]!.id, resource);

      const subjectsById = new Map(members.map((member, index) => [member.id, subjects[index]!]));
      const users: Holder[] = [];
      const serviceAccounts: Holder[] = [];
      members.forEach((member, index) => {
        if (!decisions[index]!.allow) return;
        (member.is_service_account ? serviceAccounts : users).push({
          userId: member.id,
          login: member.login,
          name: member.name,
          grants: grantsOfSubject(index),
        });
      });
      // a query of a connector: each member's label rules there, and the rules naming each team and org role
      const connector = labelRulesConnector(action, resource);
      if (connector) {
        const members = [...users, ...serviceAccounts];
        const answers = await Promise.all(
          members.map((holder) => services.engine.explainLabelRules({ subject: subjectsById.get(holder.userId)!, org_id: orgId, resource: connector })),
        );
        members.forEach((holder, index) => (holder.labelRules = answers[index]));
      }
      const ruled = connector ? document.label_rules[connector.uid] : undefined;
      const labelSelectors = (key: string) => (ruled ? { labelSelectors: ruled[key] ?? [] } : {});
      const holders = { team: new Map<string, Grant[]>(), role: new Map<string, Grant[]>(), orgRole: new Map<string, Grant[]>() };
      hypothetical.standIns.forEach((standIn, offset) => {
        const index = members.length + offset;
        if (decisions[index]!.allow) holders[standIn.kind].set(standIn.key, grantsOfSubject(index).map(held));
      });
      const teams = await findTeamsByIds(services.db, [...holders.team.keys()]);
      ctx.body = {
        action,
        resource,
        users,
        serviceAccounts,
        teams: teams
          .map((team) => ({ teamId: team.id, name: team.name, grants: holders.team.get(team.id)!, ...labelSelectors(`team:${team.id}`) }))
          .sort((a, b) => byText(a.name, b.name)),
        roles: [...holders.role].sort(([a], [b]) => byText(a, b)).map(([uid, grants]) => ({ uid, grants: grants.map(withoutRole) })),
        orgRoles: [...holders.orgRole].map(([role, grants]) => ({ role, grants, ...labelSelectors(`role:${role}`) })),
      };
    },
  });
};
