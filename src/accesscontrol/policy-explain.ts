/**
 * Explaining decisions to the people who audit them (POST /api/access-control/evaluate, who-can,
 * the CLI's explain). The policy decides and gives its reasons as data (src/authz/reasons.ts
 * words them); this module reads their fields: the grants behind an allow, and, in what it shows
 * an asker, every name the asker may not read hidden — whether the asker may is asked of the
 * policy too.
 */
import type { Decision, OrgDocument, ResourceRef } from '../authz/types.ts';
import type { Action } from '../authz/actions.ts';
import { REASON_SCHEMA, renderReason, renderReasons, type Reason } from '../authz/reasons.ts';

/** What stands for a name the asker may not read. */
export const HIDDEN = '(hidden)';

/** The read action of each kind a reason's scope can name; a scope of any other kind is hidden. */
const READ_ACTION: Record<string, Action> = {
  folders: 'folders:read',
  dashboards: 'dashboards:read',
  'alert.rules': 'alert.rules:read',
  connectors: 'connectors:read',
  teams: 'teams:read',
  roles: 'roles:read',
  serviceaccounts: 'serviceaccounts:read',
  users: 'org.users:read',
  orgs: 'orgs:read',
  annotations: 'annotations:read',
  investigations: 'investigations:read',
};

/** Roles whose definitions are the same in every org (src/accesscontrol/builtin-roles.ts), and org-role grants: never hidden. */
const PUBLIC_ROLE = /^(basic:|fixed:|managed:builtins:)/;
const MANAGED_USER_ROLE = /^managed:users:(.+):permissions$/;
const MANAGED_TEAM_ROLE = /^managed:teams:(.+):permissions$/;
/** A scope that names one resource: `<kind>:uid|id:<value>`. */
const NAMED_SCOPE = /^([a-z][a-z.]*):(uid|id):(.+)$/;

/** The resources the asker may do `action` on, among `resources` (one policy call for the lot). */
export type MayRead = (action: Action, resources: ResourceRef[]) => Promise<ResourceRef[]>;

const scopeOf = (ref: ResourceRef): string => ('scope' in ref ? ref.scope : 'uid' in ref ? `${ref.kind}:uid:${ref.uid}` : `${ref.kind}:id:${ref.id}`);

interface NameCheck {
  action: Action;
  resource: ResourceRef;
}

/** A name a reason holds, by what it is: a role uid, a legacy ACL principal, a scope. */
type Name = { role: string } | { principal: string } | { scope: string };
const keyOf = (name: Name): string => ('role' in name ? `role ${name.role}` : 'principal' in name ? `principal ${name.principal}` : `scope ${name.scope}`);

/** The names a reason holds, read from its fields. */
function namesOf(reason: Reason): Name[] {
  switch (reason.kind) {
    case 'grant':
      return reason.scope === undefined ? [{ role: reason.role }] : [{ role: reason.role }, { scope: reason.scope }];
    case 'acl':
      return [{ principal: reason.principal }, { scope: reason.scope }];
    case 'missing':
      return (reason.scopes ?? []).map((scope) => ({ scope }));
    case 'unmet':
      return reason.scope === undefined ? [] : [{ scope: reason.scope }];
    default:
      return [];
  }
}

/**
 * The check that shows a name, null when it is always shown, 'never' when nothing shows it.
 * Shown without asking: wildcards, the resource the asker named, the evaluated user (only its
 * own `user:` key and managed role can match it), org roles' ACL keys, and the roles every org shares.
 */
function checkFor(name: Name, subjectId: string, named: string | null): NameCheck | null | 'never' {
  if ('role' in name) {
    const role = name.role;
    if (PUBLIC_ROLE.test(role) || MANAGED_USER_ROLE.exec(role)?.[1] === subjectId) return null;
    const team = MANAGED_TEAM_ROLE.exec(role)?.[1];
    if (team !== undefined) return { action: 'teams:read', resource: { kind: 'teams', id: team } };
    return { action: 'roles:read', resource: { kind: 'roles', uid: role } };
  }
  if ('principal' in name) {
    const [kind, id] = splitOnce(name.principal);
    if (kind === 'user') return id === subjectId ? null : 'never';
    if (kind === 'team') return { action: 'teams:read', resource: { kind: 'teams', id } };
    return null;
  }
  const parts = NAMED_SCOPE.exec(name.scope);
  if (!parts || parts[3] === '*' || name.scope === named) return null;
  const action = READ_ACTION[parts[1]!];
  return action ? { action, resource: { scope: name.scope } } : 'never';
}

function splitOnce(text: string): [string, string] {
  const at = text.indexOf(':');
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)];
}

/** A name the asker may not read, as shown: `(hidden)`, keeping what the name says of its kind. */
function hidden(name: Name): string {
  if ('role' in name) return HIDDEN;
  if ('principal' in name) return `${splitOnce(name.principal)[0]}:${HIDDEN}`;
  const parts = NAMED_SCOPE.exec(name.scope)!;
  return `${parts[1]}:${parts[2]}:${HIDDEN}`;
}

/** A reason with each of its names passed through `show`. */
function withNames(reason: Reason, show: (name: Name) => string): Reason {
  switch (reason.kind) {
    case 'grant':
      return { ...reason, role: show({ role: reason.role }), ...(reason.scope !== undefined && { scope: show({ scope: reason.scope }) }) };
    case 'acl':
      return { ...reason, principal: show({ principal: reason.principal }), scope: show({ scope: reason.scope }) };
    case 'missing':
      return reason.scopes ? { ...reason, scopes: reason.scopes.map((scope) => show({ scope })) } : reason;
    case 'unmet':
      return reason.scope === undefined ? reason : { ...reason, scope: show({ scope: reason.scope }) };
    default:
      return reason;
  }
}

/**
 * The label rules a principal's reads of a connector are given (authz/label_rules), as evaluate
 * and who-can show them beside a `connectors:query` decision.
 */
export const LABEL_RULES_SCHEMA = {
  type: 'object',
  description:
    'For connectors:query on a connector: none (it has no label rule), bypass (an org or connector Admin reads everything), applied (reads what any of selectors matches) or denied (it has rules and none applies: reads are refused).',
  properties: { mode: { enum: ['none', 'bypass', 'applied', 'denied'] }, selectors: { type: 'array', items: { type: 'string' } } },
  required: ['mode', 'selectors'],
} as const;

/** The connector whose label rules an explanation of `action` on `resource` shows: a query of a connector named by uid. */
export function labelRulesConnector(action: Action, resource: ResourceRef | undefined): { kind: 'connectors'; uid: string } | null {
  if (action !== 'connectors:query' || !resource || !('uid' in resource) || resource.kind !== 'connectors') return null;
  return { kind: 'connectors', uid: resource.uid };
}

/** A decision as evaluate answers it: the reasons in English, and the same reasons as data. */
export interface ExplainedDecision {
  allow: boolean;
  reasons: string[];
  reasonDetails: Reason[];
}

/**
 * The decision as the asker may see it: every role, team or resource a reason names that the
 * asker may not read is replaced by `(hidden)` (reasons that then read the same are merged).
 * `subjectId` is the user the decision is about; `named` the resource the asker asked about.
 */
export async function redactDecision(decision: Decision, subjectId: string, named: ResourceRef | undefined, mayRead: MayRead): Promise<ExplainedDecision> {
  const namedScope = named ? scopeOf(named) : null;
  const checks = new Map<string, NameCheck | null | 'never'>();
  for (const reason of decision.reasons) for (const name of namesOf(reason)) checks.set(keyOf(name), checkFor(name, subjectId, namedScope));
  const byAction = new Map<Action, Array<[string, ResourceRef]>>();
  for (const [key, check] of checks)
    if (check && check !== 'never') (byAction.get(check.action) ?? byAction.set(check.action, []).get(check.action)!).push([key, check.resource]);
  const visible = new Set([...checks].filter(([, check]) => check === null).map(([key]) => key));
  for (const [action, items] of byAction) {
    const allowed = new Set(
      await mayRead(
        action,
        items.map(([, resource]) => resource),
      ),
    );
    for (const [key, resource] of items) if (allowed.has(resource)) visible.add(key);
  }
  const show = (name: Name): string => (visible.has(keyOf(name)) ? Object.values(name)[0]! : hidden(name));
  const shown = new Map<string, Reason>();
  for (const reason of decision.reasons) {
    const redacted = withNames(reason, show);
    shown.set(JSON.stringify(redacted), redacted);
  }
  const reasonDetails = [...shown.values()];
  return { allow: decision.allow, reasons: renderReasons(reasonDetails), reasonDetails };
}

/** What redactDecision answers. */
export const DECISION_SCHEMA = {
  type: 'object',
  properties: {
    allow: { type: 'boolean' },
    reasons: { type: 'array', items: { type: 'string' }, description: 'The reasons in English, in the order of reasonDetails.' },
    reasonDetails: { type: 'array', items: REASON_SCHEMA, description: 'The same reasons as data: {kind, ...} (policies/README.md, "Reasons").' },
    labelRules: LABEL_RULES_SCHEMA,
  },
  required: ['allow', 'reasons', 'reasonDetails'],
} as const;

/** A refusal the policy gives because the resource itself is malformed (bad input, not a deny), in English. */
export function resourceProblem(decision: Decision): string | undefined {
  const problem = decision.reasons.find((reason) => reason.kind === 'input' && reason.field === 'resource');
  return problem && renderReason(problem);
}

/** How a member comes to hold a role, read from the data document. */
export interface RoleRoute {
  /** Assigned to the member itself (its managed role carries its direct resource grants). */
  direct?: true;
  orgRole?: string;
  teams?: string[];
  serverAdmin?: true;
}

/** One grant that gives the action, read from a reason of the policy; a rule's (a subject on itself…) in English and as data. */
export type Grant =
  | { roleUid: string; action: string; scope: string; inheritedFrom?: string; via?: RoleRoute }
  | { legacyAcl: { level: number; principal: string }; scope: string; inheritedFrom?: string }
  | { reason: string; reasonDetail: Reason };

const text = { type: 'string' } as const;
const roleRouteSchema = {
  type: 'object',
  properties: { direct: { const: true }, orgRole: text, teams: { type: 'array', items: text }, serverAdmin: { const: true } },
} as const;
const aclGrantSchema = {
  type: 'object',
  properties: {
    legacyAcl: { type: 'object', properties: { level: { type: 'integer' }, principal: text }, required: ['level', 'principal'] },
    scope: text,
    inheritedFrom: text,
  },
  required: ['legacyAcl', 'scope'],
} as const;
const reasonSchema = { type: 'object', properties: { reason: text, reasonDetail: REASON_SCHEMA }, required: ['reason', 'reasonDetail'] } as const;

/** A grant of a member (user or service account): a role's with the member's path to it, an ACL's or a bare reason. */
export const MEMBER_GRANT_SCHEMA = {
  anyOf: [
    {
      type: 'object',
      properties: { roleUid: text, action: text, scope: text, inheritedFrom: text, via: roleRouteSchema },
      required: ['roleUid', 'action', 'scope', 'via'],
    },
    aclGrantSchema,
    reasonSchema,
  ],
} as const;

/** A grant a team or an org role holds itself: a role's without a path to it. */
export const HELD_GRANT_SCHEMA = {
  anyOf: [
    { type: 'object', properties: { roleUid: text, action: text, scope: text, inheritedFrom: text }, required: ['roleUid', 'action', 'scope'] },
    aclGrantSchema,
    reasonSchema,
  ],
} as const;

/** A grant of a role, listed under that role: what it holds where. */
export const ROLE_OWN_GRANT_SCHEMA = {
  anyOf: [{ type: 'object', properties: { action: text, scope: text, inheritedFrom: text }, required: ['action', 'scope'] }, aclGrantSchema, reasonSchema],
} as const;

/** The folder a grant on `scope` comes from when the resource inherits it from there. */
function inheritedFolder(scope: string, resource: ResourceRef): string | undefined {
  if (!scope.startsWith('folders:uid:') || scope === scopeOf(resource)) return undefined;
  return scope.slice('folders:uid:'.length);
}

function routeOf(document: OrgDocument, memberId: string, roleUid: string): RoleRoute {
  const member = document.members[memberId];
  const route: RoleRoute = {};
  if (!member) return route;
  if (member.roles.includes(roleUid)) route.direct = true;
  if (document.builtin_roles[member.role]?.includes(roleUid)) route.orgRole = member.role;
  const teams = member.teams.filter((team) => document.teams[team]?.roles.includes(roleUid));
  if (teams.length > 0) route.teams = teams;
  if (roleUid === 'basic:server_admin') route.serverAdmin = true;
  return route;
}

/** The grants behind an allow for a member of the document's org: each reason with the role, scope and path that give it. */
export function grantsOf(reasons: readonly Reason[], document: OrgDocument, memberId: string, resource: ResourceRef): Grant[] {
  return reasons.map((reason): Grant => {
    if (reason.kind === 'grant' && reason.scope !== undefined) {
      const inheritedFrom = inheritedFolder(reason.scope, resource);
      return {
        roleUid: reason.role,
        action: reason.action,
        scope: reason.scope,
        ...(inheritedFrom && { inheritedFrom }),
        via: routeOf(document, memberId, reason.role),
      };
    }
    if (reason.kind === 'acl') {
      const inheritedFrom = inheritedFolder(reason.scope, resource);
      return { legacyAcl: { level: reason.level, principal: reason.principal }, scope: reason.scope, ...(inheritedFrom && { inheritedFrom }) };
    }
    return { reason: renderReason(reason), reasonDetail: reason };
  });
}
