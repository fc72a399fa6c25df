/**
 * Role assignments of users and teams: what listing, assigning, unassigning and replacing share.
 * Each change asks the policy once: `roles:write` on the role (or, for a replacement, on each role
 * given or taken, as delegated `roles:write` permissions) and, by delegation, every permission
 * those roles grant. It is asked before anything is looked up for the caller to see, so an
 * unknown user, team or role is no probe. Each change reaches the policy through policy-writer.ts, holds
 * from the assignee's next request without signing anyone out, and is audited on the user or team.
 */
import type { Knex } from 'knex';
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { RouteContext } from '../http/route.ts';
import { findUserById } from '../identity/users.store.ts';
import { isOrgMember } from '../orgs/store.ts';
import { findTeamInOrg } from '../teams/store.ts';
import { presentAssignedRole } from './presenter.ts';
import { assertAssignable, authorizeRoleChange, findRole, kindOfRole, roleNotFound, roleScope } from './roles.ts';
import { addAssignment, lockAssignee, lockRole, removeAssignment } from './policy-writer.ts';
import { findAssignedRoles, findPermissionsByRoleIds, type AssigneeRef, type RoleRow } from './store.ts';

type Route = Pick<RouteContext<unknown, unknown, unknown>, 'ctx' | 'principal' | 'orgId' | 'services' | 'authorize'>;

/** A user or team whose roles change, with what a change of them touches. */
export interface Assignee {
  ref: AssigneeRef;
  target: { type: 'user' | 'team'; id: string; name: string };
  global: boolean;
}

/** Whose assignments a request names; `assignee` is undefined when there is no such user or team (told only after authorize). */
export interface AssigneeRequest {
  assignee: Assignee | undefined;
  notFound: NotFoundError;
  global: boolean;
}

/**
 * The user whose assignments in the org (or, `global`, everywhere) change. An org assignment
 * needs a member of the org; a global one any user.
 */
export async function userAssignee(db: Knex, orgId: string, userId: string, global: boolean): Promise<AssigneeRequest> {
  const user = await findUserById(db, userId);
  const found = !!user && (global || (await isOrgMember(db, orgId, userId)));
  return {
    assignee: found
      ? { ref: { kind: 'user', userId, orgId: global ? null : orgId }, target: { type: 'user', id: user.id, name: user.login }, global }
      : undefined,
    notFound: new NotFoundError(`user ${userId} not found in this org`),
    global,
  };
}

/** A team of the active org. */
export async function teamAssignee(db: Knex, orgId: string, teamId: string): Promise<AssigneeRequest> {
  const team = await findTeamInOrg(db, orgId, teamId);
  return {
    assignee: team ? { ref: { kind: 'team', teamId, orgId }, target: { type: 'team', id: team.id, name: team.name }, global: false } : undefined,
    notFound: new NotFoundError(`team ${teamId} not found`),
    global: false,
  };
}

/** The assignee a read names, or 404. */
export function assigneeOrFail(request: AssigneeRequest): Assignee {
  if (!request.assignee) throw request.notFound;
  return request.assignee;
}

/** The roles assigned to the assignee; a user's include its global assignments. Managed roles only with `includeHidden`. */
export async function listAssignedRoles(db: Knex, assignee: Assignee, includeHidden: boolean) {
  const rows = (await findAssignedRoles(db, assignee.ref, true)).filter((row) => includeHidden || !row.hidden);
  const permissions = await findPermissionsByRoleIds(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => presentAssignedRole(row, permissions.get(row.id) ?? []));
}

const describe = (assignee: Assignee) => `${assignee.target.type} ${assignee.target.id}`;

/** Applies the added and removed assignments in one transaction, with their side effects. */
async function applyChanges(route: Route, assignee: Assignee, added: RoleRow[], removed: RoleRow[]): Promise<void> {
  const { ctx, principal, services } = route;
  const now = services.clock.now();
  await services.transact(async (tx) => {
    if (added.length > 0 && !(await lockAssignee(tx, assignee.ref))) throw new NotFoundError(`${describe(assignee)} not found`);
    for (const role of added) if (!(await lockRole(tx, role.id, 'share'))) throw roleNotFound(role.uid, assignee.global);
    for (const role of removed) {
      if (!(await removeAssignment(tx, assignee.ref, role.id))) throw new NotFoundError(`role ${role.uid} is not assigned to ${describe(assignee)}`);
    }
    const assigned = new Set((await findAssignedRoles(tx.db, assignee.ref)).map((row) => row.id));
    for (const role of added) {
      // A global assignment has a null org, which no unique index compares: check it here.
      if (assigned.has(role.id)) throw new ConflictError(`role ${role.uid} is already assigned to ${describe(assignee)}`);
      await addAssignment(tx, assignee.ref, role.id, now);
    }
    const actor = actorOf(ctx, principal);
    const orgId = assignee.global ? null : route.orgId;
    for (const [action, roles] of [
      ['role.unassigned', removed],
      ['role.assigned', added],
    ] as const) {
      for (const role of roles) {
        await recordAudit(tx.db, actor, { action, orgId, target: assignee.target, metadata: { roleUid: role.uid, global: assignee.global } }, now);
      }
    }
  });
}

async function delegatedPermissions(route: Route, roles: RoleRow[]) {
  const permissions = await findPermissionsByRoleIds(
    route.services.db,
    roles.map((role) => role.id),
  );
  return roles.flatMap((role) => permissions.get(role.id) ?? []);
}

/** One role given or taken: `roles:write` on it and, by delegation, all it grants (an unknown role: the door only). */
async function changeOne(route: Route, request: AssigneeRequest, roleUid: string, change: 'add' | 'remove'): Promise<void> {
  const role = await findRole(route.services.db, route.orgId, roleUid, request.global);
  await authorizeRoleChange(route.authorize, 'roles:write', roleUid, role ? await delegatedPermissions(route, [role]) : [], request.global);
  const assignee = assigneeOrFail(request);
  if (!role) throw roleNotFound(roleUid, request.global);
  assertAssignable(role);
  await applyChanges(route, assignee, change === 'add' ? [role] : [], change === 'remove' ? [role] : []);
}

export const assignRole = (route: Route, request: AssigneeRequest, roleUid: string) => changeOne(route, request, roleUid, 'add');

export const unassignRole = (route: Route, request: AssigneeRequest, roleUid: string) => changeOne(route, request, roleUid, 'remove');

/**
 * Makes `roleUids` the assignee's roles in its scope (the org, or global assignments), leaving
 * managed roles alone: they follow resource grants. One decision covers every role given or
 * taken: `roles:write` on each (delegated, so a wildcard or `*` covers it) and all they grant.
 * Returns the uids added and removed.
 */
export async function replaceAssignedRoles(route: Route, request: AssigneeRequest, roleUids: string[]): Promise<{ added: string[]; removed: string[] }> {
  const db = route.services.db;
  const wanted: RoleRow[] = [];
  const unknown: string[] = [];
  for (const uid of new Set(roleUids)) {
    const role = await findRole(db, route.orgId, uid, request.global);
    if (role) wanted.push(role);
    else unknown.push(uid);
  }
  const assigned = request.assignee ? await findAssignedRoles(db, request.assignee.ref) : [];
  const current = assigned.filter((row) => kindOfRole(row.uid) !== 'managed');
  const wantedIds = new Set(wanted.map((role) => role.id));
  const currentIds = new Set(current.map((role) => role.id));
  const added = wanted.filter((role) => !currentIds.has(role.id));
  const removed = current.filter((role) => !wantedIds.has(role.id));
  const changed = [...added, ...removed];
  await route.authorize('roles:write', undefined, {
    ...roleScope(request.global),
    delegate: [...changed.map((role) => ({ action: 'roles:write', scope: `roles:uid:${role.uid}` })), ...(await delegatedPermissions(route, changed))],
  });
  const assignee = assigneeOrFail(request);
  if (unknown.length > 0) throw roleNotFound(unknown[0]!, request.global);
  wanted.forEach(assertAssignable);
  if (changed.length > 0) await applyChanges(route, assignee, added, removed);
  return { added: added.map((role) => role.uid), removed: removed.map((role) => role.uid) };
}
