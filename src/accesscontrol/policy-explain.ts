/**
 * Explaining decisions to the people who audit them (POST /api/access-control/evaluate, who-can,
 * the CLI's explain). The policy decides and words its reasons; this module only reads them:
 * it takes apart the grants a reason names and hides, in what it shows an asker, every name the
 * asker may not read — whether the asker may is asked of the policy too.
 */
import type { Decision, OrgDocument, ResourceRef } from '../authz/types.ts';
import type { Action } from '../authz/actions.ts';

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

/**
 * The names a reason can hold: a role (`role <uid> grants`), a legacy ACL principal
 * (`to user:<id>` / `to team:<id>`, at the end) and a resource scope (`<kind>:uid|id:<value>`).
 */
const NAME = /\brole (\S+)(?= grants)|\bto (user|team):(\S+)$|\b([a-z][a-z.]*):(uid|id):([^\s,]+)/g;

/** Roles whose definitions are the same in every org (src/accesscontrol/builtin-roles.ts), and org-role grants: never hidden. */
const PUBLIC_ROLE = /^(basic:|fixed:|managed:builtins:)/;
const MANAGED_USER_ROLE = /^managed:users:(.+):permissions$/;
const MANAGED_TEAM_ROLE = /^managed:teams:(.+):permissions$/;

/** The resources the asker may do `action` on, among `resources` (one policy call for the lot). */
export type MayRead = (action: Action, resources: ResourceRef[]) => Promise<ResourceRef[]>;

const scopeOf = (ref: ResourceRef): string => ('scope' in ref ? ref.scope : 'uid' in ref ? `${ref.kind}:uid:${ref.uid}` : `${ref.kind}:id:${ref.id}`);

interface NameCheck {
  action: Action;
  resource: ResourceRef;
}

/**
 * The check that shows a name, null when it is always shown, 'never' when nothing shows it.
 * Shown without asking: wildcards, the resource the asker named, the evaluated user (only its
 * own `user:` key and managed role can match it), and the roles every org shares.
 */
function checkFor(match: RegExpMatchArray, subjectId: string, named: string | null): NameCheck | null | 'never' {
  const [, role, principalKind, principalId, kind, attr, value] = match;
  if (role !== undefined) {
    if (PUBLIC_ROLE.test(role) || MANAGED_USER_ROLE.exec(role)?.[1] === subjectId) return null;
    const team = MANAGED_TEAM_ROLE.exec(role)?.[1];
    if (team !== undefined) return { action: 'teams:read', resource: { kind: 'teams', id: team } };
    return { action: 'roles:read', resource: { kind: 'roles', uid: role } };
  }
  if (principalKind === 'user') return principalId === subjectId ? null : 'never';
  if (principalKind === 'team') return { action: 'teams:read', resource: { kind: 'teams', id: principalId! } };
  const scope = `${kind}:${attr}:${value}`;
  if (value === '*' || scope === named) return null;
  const action = READ_ACTION[kind!];
  return action ? { action, resource: { scope } } : 'never';
}

/**
 * The decision as the asker may see it: every role, team or resource a reason names that the
 * asker may not read is replaced by `(hidden)` (reasons that then read the same are merged).
 * `subjectId` is the user the decision is about; `named` the resource the asker asked about.
 */
export async function redactDecision(decision: Decision, subjectId: string, named: ResourceRef | undefined, mayRead: MayRead): Promise<Decision> {
  const namedScope = named ? scopeOf(named) : null;
  const checks = new Map<string, NameCheck | null | 'never'>();
  for (const reason of decision.reasons) {
    for (const match of reason.matchAll(NAME)) checks.set(match[0], checkFor(match, subjectId, namedScope));
  }
  const byAction = new Map<Action, Array<[string, ResourceRef]>>();
  for (const [text, check] of checks)
    if (check && check !== 'never') (byAction.get(check.action) ?? byAction.set(check.action, []).get(check.action)!).push([text, check.resource]);
  const visible = new Set([...checks].filter(([, check]) => check === null).map(([text]) => text));
  for (const [action, items] of byAction) {
    const allowed = new Set(
      await mayRead(
        action,
        items.map(([, resource]) => resource),
      ),
    );
    for (const [text, resource] of items) if (allowed.has(resource)) visible.add(text);
  }
  const hide = (text: string, role?: string, principalKind?: string, _principalId?: string, kind?: string, attr?: string) => {
    if (visible.has(text)) return text;
    if (role !== undefined) return `role ${HIDDEN}`;
    if (principalKind !== undefined) return `to ${principalKind}:${HIDDEN}`;
    return `${kind}:${attr}:${HIDDEN}`;
  };
  const reasons = [...new Set(decision.reasons.map((reason) => reason.replace(NAME, hide)))];
  return { allow: decision.allow, reasons };
}

/** What redactDecision answers. */
export const DECISION_SCHEMA = {
  type: 'object',
  properties: { allow: { type: 'boolean' }, reasons: { type: 'array', items: { type: 'string' } } },
  required: ['allow', 'reasons'],
} as const;

/** A refusal the policy gives because the resource itself is malformed: bad input, not a deny. */
export function resourceProblem(decision: Decision): string | undefined {
  return decision.reasons.find((reason) => reason.startsWith('unknown resource kind ') || reason.startsWith('resource must be '));
}

/** How a member comes to hold a role, read from the data document. */
export interface RoleRoute {
  /** Assigned to the member itself (its managed role carries its direct resource grants). */
  direct?: true;
  orgRole?: string;
  teams?: string[];
  serverAdmin?: true;
}

/** One grant that gives the action, taken apart from a reason of the policy. */
export type Grant =
  | { roleUid: string; action: string; scope: string; inheritedFrom?: string; via?: RoleRoute }
  | { legacyAcl: { level: number; principal: string }; scope: string; inheritedFrom?: string }
  | { reason: string };

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
const reasonSchema = { type: 'object', properties: { reason: text }, required: ['reason'] } as const;

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

const ROLE_GRANT = /^role (\S+) grants (\S+) on (\S+)$/;
const ACL_GRANT = /^legacy ACL grants level (\d+) on (\S+) to (\S+)$/;

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
export function grantsOf(reasons: string[], document: OrgDocument, memberId: string, resource: ResourceRef): Grant[] {
  return reasons.map((reason): Grant => {
    const role = ROLE_GRANT.exec(reason);
    if (role) {
      const [, roleUid, action, scope] = role as unknown as [string, string, string, string];
      const inheritedFrom = inheritedFolder(scope, resource);
      return { roleUid, action, scope, ...(inheritedFrom && { inheritedFrom }), via: routeOf(document, memberId, roleUid) };
    }
    const acl = ACL_GRANT.exec(reason);
    if (acl) {
      const [, level, scope, principal] = acl as unknown as [string, string, string, string];
      const inheritedFrom = inheritedFolder(scope, resource);
      return { legacyAcl: { level: Number(level), principal }, scope, ...(inheritedFrom && { inheritedFrom }) };
    }
    return { reason };
  });
}
