/**
 * What custom roles must satisfy and what a change to one sets off: naming (custom roles start
 * with `custom:`, the service's own prefixes are reserved), permission syntax, which roles may
 * change or be assigned, and delegation (Grafana's rule: nobody grants what they do not hold).
 * A change to a role reaches its holders through the policy at their next request: it signs
 * nobody out (sessions end on a change of the user's own standing, session-revocation.ts).
 */
import type { Knex } from 'knex';
import type { Subject } from '../authz/types.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { RouteContext } from '../http/route.ts';
import { subjectOf } from '../http/subject.ts';
import { toPrincipalUser, type UserRow } from '../identity/users.store.ts';
import { isGrantableAction, type Action } from '../authz/actions.ts';
import type { Permission } from './builtin-roles.ts';
import { findGlobalRole, findPermissionsByRoleIds, findRoleVisibleInOrg, type RoleRow } from './store.ts';

export const CUSTOM_PREFIX = 'custom:';
const RESERVED_PREFIXES = ['basic:', 'fixed:', 'managed:'] as const;

const UID_PATTERN = /^custom:[A-Za-z0-9._:-]+$/;
// `*`, `<kind>:*` or `<kind>:<attr>:<value>` (a value may hold colons: `roles:uid:custom:x`)
const SCOPE_PATTERN = /^\*$|^[a-z][a-z.]*:\*$|^[a-z][a-z.]*:[a-zA-Z_]+:\S+$/;

type Authorize = RouteContext<unknown, unknown, unknown>['authorize'];

/** The policy's name for a role. */
export const roleRef = (uid: string) => ({ kind: 'roles', uid });

export const roleTarget = (role: Pick<RoleRow, 'uid' | 'name'>) => ({ type: 'role', id: role.uid, name: role.name });

/** What kind of role a uid names, by its prefix. */
export function kindOfRole(uid: string): 'basic' | 'fixed' | 'managed' | 'custom' {
  const prefix = RESERVED_PREFIXES.find((reserved) => uid.startsWith(reserved));
  return prefix ? (prefix.slice(0, -1) as 'basic' | 'fixed' | 'managed') : 'custom';
}

/** A custom role's uid or name: `custom:` and something after it; the service's prefixes are refused by name. */
export function assertCustomRoleName(field: 'uid' | 'name', value: string): void {
  const reserved = RESERVED_PREFIXES.find((prefix) => value.startsWith(prefix));
  if (reserved) {
    throw new BadRequestError(
      `role ${field} ${value} uses the reserved prefix ${reserved}: basic:, fixed: and managed: roles belong to the service; custom roles start with custom:`,
    );
  }
  if (!value.startsWith(CUSTOM_PREFIX) || value.length === CUSTOM_PREFIX.length) {
    throw new BadRequestError(`role ${field} must start with custom: followed by a name`);
  }
  if (field === 'uid' && !UID_PATTERN.test(value)) throw new BadRequestError('role uid may only hold letters, digits and . _ : - after custom:');
}

export function assertValidPermissions(permissions: Permission[]): void {
  permissions.forEach(({ action, scope }, i) => {
    if (!isGrantableAction(action))
      throw new BadRequestError(`permissions[${i}].action ${action} is not a known action: a catalogued <resource>:<verb>, <resource>:* or *`);
    if (!SCOPE_PATTERN.test(scope)) throw new BadRequestError(`permissions[${i}].scope ${scope} is not a scope: *, <kind>:* or <kind>:<attribute>:<value>`);
  });
}

/** Only custom roles change or go: the basic, fixed and managed ones are the service's. */
export function assertCustomRole(role: RoleRow, verb: 'changed' | 'deleted'): void {
  const kind = kindOfRole(role.uid);
  if (kind !== 'custom') throw new BadRequestError(`${kind} role ${role.uid} cannot be ${verb}: only custom roles can`);
}

/** Basic roles come with the org role and managed ones with resource grants; the rest are assigned here. */
export function assertAssignable(role: RoleRow): void {
  const kind = kindOfRole(role.uid);
  if (kind === 'basic') throw new BadRequestError(`basic role ${role.uid} comes with the org role: change the org role instead`);
  if (kind === 'managed') throw new BadRequestError(`managed role ${role.uid} carries resource grants: change the grants instead`);
}

/** The role `uid` as the org sees it (its own, else the global one), or only the global one. */
export async function findRole(db: Knex, orgId: string, uid: string, global = false): Promise<RoleRow | undefined> {
  return global ? findGlobalRole(db, uid) : findRoleVisibleInOrg(db, orgId, uid);
}

export const roleNotFound = (uid: string, global = false) => new NotFoundError(`${global ? 'global role' : 'role'} ${uid} not found`);

export async function resolveRole(db: Knex, orgId: string, uid: string, global = false): Promise<RoleRow> {
  const role = await findRole(db, orgId, uid, global);
  if (!role) throw roleNotFound(uid, global);
  return role;
}

export async function permissionsOf(db: Knex, role: RoleRow): Promise<Permission[]> {
  return (await findPermissionsByRoleIds(db, [role.id])).get(role.id) ?? [];
}

/** The authorize options of a role in scope: a global role is the server's business. */
export const roleScope = (global: boolean) => (global ? { orgId: null } : {});

/**
 * Authorizes `action` on the role and, in the same decision, delegation: the caller must hold
 * every permission the role grants. The policy words a delegation refusal itself.
 */
export async function authorizeRoleChange(authorize: Authorize, action: Action, uid: string, permissions: Permission[], global: boolean): Promise<void> {
  await authorize(action, roleRef(uid), { ...roleScope(global), delegate: permissions.map((p) => ({ action: p.action, scope: p.scope })) });
}

/** A stored user as the policy sees it, as if it were the caller. */
export function subjectOfUser(row: UserRow): Subject {
  return subjectOf({ user: toPrincipalUser(row), via: 'session', sessionId: null, pinnedOrgId: null });
}

/** The settings row custom-role creations lock (see ensureLockRow at boot). */
export const ROLE_CREATION_LOCK = 'roles.create.lock';
