/**
 * Role assignments of users and teams: what listing, assigning, unassigning and replacing share.
 * Each change tells the policy (the member, the team, or the member in every org for a global
 * assignment), so it holds from the assignee's next request without signing anyone out, and is
 * audited on the user or team.
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
import { assertAssignable, authorizeRoleChange, kindOfRole, resolveRole } from './roles.ts';
import { addAssignment, removeAssignment } from './grants.ts';
import { findAssignedRoles, findPermissionsByRoleIds, type AssigneeRef, type RoleRow } from './store.ts';

type Route = Pick<RouteContext<unknown, unknown, unknown>, 'ctx' | 'principal' | 'orgId' | 'services' | 'authorize'>;

/** A user or team whose roles change, with what a change of them touches. */
export interface Assignee {
  ref: AssigneeRef;
  target: { type: 'user' | 'team'; id: string; name: string };
  global: boolean;
}

/**
 * The user whose assignments in the org (or, `global`, everywhere) change. An org assignment
 * needs a member of the org; a global one any user.
 */
export async function loadUserAssignee(db: Knex, orgId: string, userId: string, global: boolean): Promise<Assignee> {
  const user = await findUserById(db, userId);
  if (!user || (!global && !(await isOrgMember(db, orgId, userId)))) throw new NotFoundError(`user ${userId} not found in this org`);
  return {
    ref: { kind: 'user', userId, orgId: global ? null : orgId },
    target: { type: 'user', id: user.id, name: user.login },
    global,
  };
}

/** A team of the active org. */
export async function loadTeamAssignee(db: Knex, orgId: string, teamId: string): Promise<Assignee> {
  const team = await findTeamInOrg(db, orgId, teamId);
  if (!team) throw new NotFoundError(`team ${teamId} not found`);
  return {
    ref: { kind: 'team', teamId, orgId },
    target: { type: 'team', id: team.id, name: team.name },
    global: false,
  };
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

/** Delegation on each role given or taken: the caller must hold all it grants. */
async function authorizeEach(route: Route, roles: RoleRow[], global: boolean): Promise<void> {
  const permissions = await findPermissionsByRoleIds(
    route.services.db,
    roles.map((role) => role.id),
  );
  for (const role of roles) await authorizeRoleChange(route.authorize, 'roles:write', role.uid, permissions.get(role.id) ?? [], global);
}

export async function assignRole(route: Route, assignee: Assignee, roleUid: string): Promise<void> {
  const role = await resolveRole(route.services.db, route.orgId, roleUid, assignee.global);
  assertAssignable(role);
  await authorizeEach(route, [role], assignee.global);
  await applyChanges(route, assignee, [role], []);
}

export async function unassignRole(route: Route, assignee: Assignee, roleUid: string): Promise<void> {
  const role = await resolveRole(route.services.db, route.orgId, roleUid, assignee.global);
  assertAssignable(role);
  await authorizeEach(route, [role], assignee.global);
  await applyChanges(route, assignee, [], [role]);
}

/**
 * Makes `roleUids` the assignee's roles in its scope (the org, or global assignments), leaving
 * managed roles alone: they follow resource grants. Returns the uids added and removed.
 */
export async function replaceAssignedRoles(route: Route, assignee: Assignee, roleUids: string[]): Promise<{ added: string[]; removed: string[] }> {
  const db = route.services.db;
  const wanted: RoleRow[] = [];
  for (const uid of new Set(roleUids)) {
    const role = await resolveRole(db, route.orgId, uid, assignee.global);
    assertAssignable(role);
    wanted.push(role);
  }
  const current = (await findAssignedRoles(db, assignee.ref)).filter((row) => kindOfRole(row.uid) !== 'managed');
  const wantedIds = new Set(wanted.map((role) => role.id));
  const currentIds = new Set(current.map((role) => role.id));
  const added = wanted.filter((role) => !currentIds.has(role.id));
  const removed = current.filter((role) => !wantedIds.has(role.id));
  await authorizeEach(route, [...added, ...removed], assignee.global);
  if (added.length + removed.length > 0) await applyChanges(route, assignee, added, removed);
  return { added: added.map((role) => role.uid), removed: removed.map((role) => role.uid) };
}
