/**
 * The members of an org: list, add, re-role, remove. Shared by `/api/orgs/<id>/users…` (any org,
 * by id) and `/api/org/users…` (the active org); the routes authorize, these act. An org keeps at
 * least one Admin; a changed or removed membership ends the user's sessions (the spec's "role
 * change") and is told to the policy before the next request.
 */
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { recordAudit, recordFailure, type Actor } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { ORG_ROLES, type OrgRole } from '../authz/types.ts';
import type { Tx } from '../db/transaction.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { listPage, pageOf } from '../http/pagination.ts';
import type { Principal } from '../principal.ts';
import { revokeAllSessionsOf, userTarget } from '../identity/session-revocation.ts';
import { addOrgMember, findUserById, findUserByLoginOrEmail, setDefaultOrg } from '../identity/users.store.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import type { Services } from '../services.ts';
import { presentMember } from './presenter.ts';
import {
  findHumanAdminIds,
  findHumanMember,
  findHumanMembersPage,
  findOrgById,
  isOrgMember,
  lockOrg,
  removeOrgMembership,
  setMemberRole,
  type MemberRow,
  type OrgRow,
} from './store.ts';
import { loginOrEmailSchema } from '../http/schemas.ts';

export const orgRoleSchema = { type: 'string', enum: [...ORG_ROLES] } as const;

export const addMemberBodySchema = {
  type: 'object',
  properties: { loginOrEmail: loginOrEmailSchema, role: orgRoleSchema },
  required: ['loginOrEmail', 'role'],
  additionalProperties: false,
} as const;

export const memberRoleBodySchema = { type: 'object', properties: { role: orgRoleSchema }, required: ['role'], additionalProperties: false } as const;

/** The answer of adding a member: who was added. */
export const MEMBER_ADDED_SCHEMA = {
  type: 'object',
  properties: { message: { type: 'string' }, userId: { type: 'string' } },
  required: ['message', 'userId'],
} as const;

/** What the policy needs of the user a role change or removal is about (a server admin is protected). */
export async function membershipTarget(db: Knex, userId: string): Promise<{ server_admin: boolean }> {
  const user = await findUserById(db, userId);
  return { server_admin: !!user?.is_svc_admin };
}

/** Who is acting: what the audit entries and session revocations need of the request. */
export interface Caller {
  ctx: Context;
  principal: Principal;
  services: Services;
}

/** The refusal to leave an org without an Admin; audited as a failure of the attempted change. */
class LastAdminError extends BadRequestError {
  constructor(what: 'demote' | 'remove') {
    super(`cannot ${what} the last Admin of the org: make another member Admin first`);
  }
}

const memberTarget = (member: MemberRow) => userTarget({ id: member.user_id, login: member.login });

async function lockExistingOrg(tx: Tx, orgId: string): Promise<OrgRow> {
  const org = await lockOrg(tx.db, orgId);
  if (!org) throw new NotFoundError(`org ${orgId} not found`);
  return org;
}

async function findMemberOrFail(db: Knex, orgId: string, userId: string): Promise<MemberRow> {
  const member = await findHumanMember(db, orgId, userId);
  if (!member) throw new NotFoundError(`user ${userId} is not a member of this org`);
  return member;
}

/** Call with the org row locked (lockOrg), so concurrent demotions see each other. */
async function assertAnotherAdminRemains(tx: Tx, orgId: string, member: MemberRow, what: 'demote' | 'remove'): Promise<void> {
  if (member.role !== 'Admin') return;
  const admins = await findHumanAdminIds(tx.db, orgId);
  if (!admins.some((id) => id !== member.user_id)) throw new LastAdminError(what);
}

/** Runs a member change; a last-Admin refusal is recorded as a failed `action` before it reaches the caller. */
async function auditingRefusal<T>(caller: Caller, action: string, orgId: string, userId: string, work: (actor: Actor) => Promise<T>): Promise<T> {
  const actor = actorOf(caller.ctx, caller.principal);
  try {
    return await work(actor);
  } catch (err) {
    if (err instanceof LastAdminError) {
      await recordFailure(caller.services, actor, { action, orgId, target: { type: 'user', id: userId }, metadata: { reason: 'last admin' } });
    }
    throw err;
  }
}

/** One page of the org's people (`query`: login, email or name contains it), as `{totalCount, orgUsers, page, perPage}`. */
export async function listOrgMembers(db: Knex, orgId: string, query: { perpage?: number; page?: number; query?: string }) {
  if (!(await findOrgById(db, orgId))) throw new NotFoundError(`org ${orgId} not found`);
  const page = pageOf(query);
  return listPage('orgUsers', page, await findHumanMembersPage(db, orgId, query.query?.trim(), page), presentMember);
}

/** Adds an existing person (not a service account) by login or email, within the org's `users` quota. */
export async function addMemberByLoginOrEmail(caller: Caller, orgId: string, body: { loginOrEmail: string; role: OrgRole }) {
  const { services } = caller;
  const now = services.clock.now();
  return services.transact(async (tx) => {
    const org = await lockExistingOrg(tx, orgId);
    const user = await findUserByLoginOrEmail(tx.db, body.loginOrEmail);
    if (!user || user.is_service_account) throw new NotFoundError('no user with that login or email');
    if (await isOrgMember(tx.db, org.id, user.id)) throw new ConflictError(`user ${user.login} is already a member of this org`);
    await enforceOrgQuota(tx, services.config, org.id, 'users', now);
    await addOrgMember(tx, org.id, user.id, body.role, now);
    // Someone who belonged nowhere now has a home to land in.
    if (!user.default_org_id) await setDefaultOrg(tx.db, user.id, org.id, now);
    await recordAudit(
      tx.db,
      actorOf(caller.ctx, caller.principal),
      { action: 'org.member_added', orgId: org.id, target: userTarget(user), metadata: { org: org.name, role: body.role } },
      now,
    );
    return { message: 'user added to the org', userId: user.id };
  });
}

export async function changeMemberRole(caller: Caller, orgId: string, userId: string, role: OrgRole) {
  const { services } = caller;
  const now = services.clock.now();
  await auditingRefusal(caller, 'org.member_role_changed', orgId, userId, (actor) =>
    services.transact(async (tx) => {
      const org = await lockExistingOrg(tx, orgId);
      const member = await findMemberOrFail(tx.db, org.id, userId);
      if (member.role === role) return;
      if (role !== 'Admin') await assertAnotherAdminRemains(tx, org.id, member, 'demote');
      await setMemberRole(tx, org.id, member.user_id, role);
      await recordAudit(
        tx.db,
        actor,
        { action: 'org.member_role_changed', orgId: org.id, target: memberTarget(member), metadata: { org: org.name, from: member.role, to: role } },
        now,
      );
      await revokeAllSessionsOf(tx, actor, { id: member.user_id, login: member.login }, 'org role changed', now);
    }),
  );
  return { message: 'org user updated' };
}

export async function removeMember(caller: Caller, orgId: string, userId: string) {
  const { services } = caller;
  const now = services.clock.now();
  await auditingRefusal(caller, 'org.member_removed', orgId, userId, (actor) =>
    services.transact(async (tx) => {
      const org = await lockExistingOrg(tx, orgId);
      const member = await findMemberOrFail(tx.db, org.id, userId);
      await assertAnotherAdminRemains(tx, org.id, member, 'remove');
      await removeOrgMembership(tx, org.id, member.user_id);
      await recordAudit(
        tx.db,
        actor,
        { action: 'org.member_removed', orgId: org.id, target: memberTarget(member), metadata: { org: org.name, role: member.role } },
        now,
      );
      await revokeAllSessionsOf(tx, actor, { id: member.user_id, login: member.login }, 'removed from org', now);
    }),
  );
  return { message: 'user removed from the org' };
}
