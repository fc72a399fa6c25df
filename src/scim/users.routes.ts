/**
 * SCIM Users (`/scim/v2/Users…`, RFC 7644 §3) of the token's org. A user is reached only through
 * scim_users of that org: by its id, its externalId or a filter, never an account the org did
 * not provision through SCIM. A new user must not share a userName or email with any account
 * (409 `uniqueness`: it never links to one); it joins the org as Viewer, without a password, and
 * signs in through the org's identity provider. `active: false` disables it and ends its sessions.
 */
import { recordAudit, type Actor } from '../audit/writer.ts';
import type { Tx } from '../db/transaction.ts';
import { NotFoundError } from '../errors.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { revokeAllSessionsOf, userTarget } from '../identity/session-revocation.ts';
import { addOrgMember, deleteUser, findUserClashing, insertUser, lockUser, setUserDisabled, updateUserProfile } from '../identity/users.store.ts';
import { lockOrg, removeOrgMembership } from '../orgs/store.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import type { Services } from '../services.ts';
import { SCIM_ERROR_SCHEMA, SCIM_PREFIX, uniqueness } from './errors.ts';
import { parseFilter } from './filter.ts';
import { listQuerySchema, pageOfList } from './list.ts';
import { listResponse, listResponseSchema, presentScimUser, SCIM_USER_SCHEMA } from './presenter.ts';
import {
  belongsToAnotherOrg,
  deleteScimUserLink,
  findScimGroupsOfUsers,
  findScimUser,
  findScimUserByExternalId,
  findScimUsersPage,
  insertScimUserLink,
  setUserEmail,
  updateScimUserLink,
  USER_FILTER_ATTRIBUTES,
  type ScimUserRow,
} from './store.ts';
import { patchOperations, patchUser, userFromResource, type UserFields } from './users.ts';

/** The org role of a user SCIM creates; an org admin changes it like any other member's. */
const SCIM_USER_ROLE = 'Viewer';

export const scimIdParams = { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 40 } }, required: ['id'] } as const;
/** A SCIM body is checked attribute by attribute (users.ts, groups.ts): clients send many this service ignores. */
export const scimBodySchema = { type: 'object' } as const;
export const SCIM_ERRORS = { 400: SCIM_ERROR_SCHEMA, 401: SCIM_ERROR_SCHEMA, 403: SCIM_ERROR_SCHEMA } as const;

const fieldsOf = (row: ScimUserRow): UserFields => ({
  userName: row.login,
  name: row.name,
  email: row.email,
  active: !row.is_disabled,
  externalId: row.external_id,
});

async function findScimUserOrFail(services: Services | Tx, orgId: string, userId: string): Promise<ScimUserRow> {
  const user = await findScimUser(services.db, orgId, userId);
  if (!user) throw new NotFoundError(`user ${userId} not found`);
  return user;
}

/** The SCIM user, its row locked on MySQL until the transaction ends and read again under the lock. */
async function lockedScimUser(tx: Tx, orgId: string, userId: string): Promise<ScimUserRow> {
  await findScimUserOrFail(tx, orgId, userId);
  await lockUser(tx.db, userId);
  return findScimUserOrFail(tx, orgId, userId);
}

async function presentOne(services: Services, orgId: string, userId: string) {
  const row = await findScimUserOrFail(services, orgId, userId);
  const groups = await findScimGroupsOfUsers(services.db, orgId, [userId]);
  return presentScimUser(row, groups.get(userId) ?? []);
}

const clash = () => uniqueness('a user with that userName or email already exists');
const externalIdTaken = () => uniqueness('a user of this org already has that externalId');

/** Changes the SCIM user `current` to `next` in the caller's transaction: only what differs is written and audited. */
async function saveUser(tx: Tx, actor: Actor, orgId: string, current: ScimUserRow, next: UserFields, now: number): Promise<void> {
  const before = fieldsOf(current);
  const fields = (Object.keys(next) as Array<keyof UserFields>).filter((key) => next[key] !== before[key]).sort();
  if (fields.length === 0) return;
  const login = next.userName.toLowerCase();
  const email = next.email?.toLowerCase() ?? null;
  const taken = [login !== current.login && login, email !== current.email && email].filter((value): value is string => !!value);
  if (taken.length > 0 && (await findUserClashing(tx.db, taken, current.id))) throw clash();
  if (next.externalId !== before.externalId) {
    if (next.externalId !== null && (await findScimUserByExternalId(tx.db, orgId, next.externalId, current.id))) throw externalIdTaken();
    await updateScimUserLink(tx.db, orgId, current.id, next.externalId, now);
  }
  await updateUserProfile(tx.db, current.id, { ...(next.name !== current.name && { name: next.name }), ...(login !== current.login && { login }) }, now);
  if (email !== current.email) await setUserEmail(tx.db, current.id, email, now);
  const target = userTarget({ id: current.id, login });
  await recordAudit(tx.db, actor, { action: 'user.updated', orgId, target, metadata: { fields, by: 'scim' } }, now);
  if (next.active !== before.active) {
    await setUserDisabled(tx.db, current.id, !next.active, now);
    await recordAudit(tx.db, actor, { action: next.active ? 'user.enabled' : 'user.disabled', orgId, target, metadata: { by: 'scim' } }, now);
    if (!next.active) await revokeAllSessionsOf(tx, actor, { id: current.id, login }, 'user disabled', now);
  }
}

export const scimUserRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: `${SCIM_PREFIX}/Users`,
    access: 'authenticated',
    level: 'org',
    query: listQuerySchema,
    summary: 'SCIM: lists the users the org provisioned, filtered (eq, co, sw, pr, and, or) and paged (startIndex, count).',
    responses: { 200: listResponseSchema(SCIM_USER_SCHEMA), ...SCIM_ERRORS },
    async handler({ ctx, query, orgId, services, authorize }) {
      await authorize('scim:read');
      const filter = query.filter === undefined ? undefined : parseFilter(query.filter, USER_FILTER_ATTRIBUTES, 'User');
      const page = pageOfList(query);
      const found = await findScimUsersPage(services.db, orgId, filter, page);
      const groups = await findScimGroupsOfUsers(
        services.db,
        orgId,
        found.rows.map((row) => row.id),
      );
      ctx.body = listResponse(
        found.rows.map((row) => presentScimUser(row, groups.get(row.id) ?? [])),
        found.totalCount,
        page.startIndex,
      );
    },
  });

  routes.add({
    method: 'post',
    path: `${SCIM_PREFIX}/Users`,
    access: 'authenticated',
    level: 'org',
    body: scimBodySchema,
    summary: 'SCIM: creates a user in the org (Viewer, no password); a userName or email another account holds is 409 uniqueness.',
    responses: { 201: SCIM_USER_SCHEMA, 409: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, body, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const user = userFromResource(body);
      const now = services.clock.now();
      const userId = await services.transact(async (tx) => {
        await lockOrg(tx.db, orgId);
        if (user.externalId !== null && (await findScimUserByExternalId(tx.db, orgId, user.externalId))) throw externalIdTaken();
        if (await findUserClashing(tx.db, [user.userName, ...(user.email ? [user.email] : [])])) throw clash();
        await enforceOrgQuota(tx, services.config, orgId, 'users', now);
        const id = await insertUser(tx.db, { login: user.userName, email: user.email, name: user.name, passwordHash: null, defaultOrgId: orgId }, now);
        if (!user.active) await setUserDisabled(tx.db, id, true, now);
        await addOrgMember(tx, orgId, id, SCIM_USER_ROLE, now);
        await insertScimUserLink(tx.db, orgId, id, user.externalId, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'user.created',
            orgId,
            target: userTarget({ id, login: user.userName.toLowerCase() }),
            metadata: { isSvcAdmin: false, orgRole: SCIM_USER_ROLE, via: 'scim', active: user.active, externalId: user.externalId },
          },
          now,
        );
        return id;
      });
      ctx.status = 201;
      ctx.set('Location', `${SCIM_PREFIX}/Users/${userId}`);
      ctx.body = await presentOne(services, orgId, userId);
    },
  });

  routes.add({
    method: 'get',
    path: `${SCIM_PREFIX}/Users/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    summary: 'SCIM: reads a user the org provisioned.',
    responses: { 200: SCIM_USER_SCHEMA, 404: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('scim:read');
      ctx.body = await presentOne(services, orgId, params.id);
    },
  });

  routes.add({
    method: 'put',
    path: `${SCIM_PREFIX}/Users/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    body: scimBodySchema,
    summary: 'SCIM: replaces a user the org provisioned (userName, name, email, active, externalId).',
    responses: { 200: SCIM_USER_SCHEMA, 404: SCIM_ERROR_SCHEMA, 409: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const next = userFromResource(body);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const current = await lockedScimUser(tx, orgId, params.id);
        await saveUser(tx, actorOf(ctx, principal), orgId, current, next, now);
      });
      ctx.body = await presentOne(services, orgId, params.id);
    },
  });

  routes.add({
    method: 'patch',
    path: `${SCIM_PREFIX}/Users/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    body: scimBodySchema,
    summary: 'SCIM: changes a user the org provisioned with add, replace and remove operations.',
    responses: { 200: SCIM_USER_SCHEMA, 404: SCIM_ERROR_SCHEMA, 409: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, body, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const operations = patchOperations(body);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const current = await lockedScimUser(tx, orgId, params.id);
        await saveUser(tx, actorOf(ctx, principal), orgId, current, patchUser(fieldsOf(current), operations), now);
      });
      ctx.body = await presentOne(services, orgId, params.id);
    },
  });

  routes.add({
    method: 'delete',
    path: `${SCIM_PREFIX}/Users/:id`,
    access: 'authenticated',
    level: 'org',
    params: scimIdParams,
    summary: 'SCIM: deletes a user the org provisioned; one that belongs to other orgs too only leaves this one.',
    responses: { 204: null, 404: SCIM_ERROR_SCHEMA, ...SCIM_ERRORS },
    async handler({ ctx, params, principal, orgId, services, authorize }) {
      await authorize('scim:write');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const user = await lockedScimUser(tx, orgId, params.id);
        const actor = actorOf(ctx, principal);
        if (await belongsToAnotherOrg(tx.db, user.id, orgId)) {
          await removeOrgMembership(tx, orgId, user.id);
          await deleteScimUserLink(tx.db, orgId, user.id);
          await recordAudit(tx.db, actor, { action: 'org.member_removed', orgId, target: userTarget(user), metadata: { by: 'scim' } }, now);
          await revokeAllSessionsOf(tx, actor, user, 'removed from org', now);
        } else {
          await deleteUser(tx, user.id);
          await recordAudit(tx.db, actor, { action: 'user.deleted', orgId, target: userTarget(user), metadata: { orgIds: [orgId], by: 'scim' } }, now);
        }
      });
      ctx.status = 204;
    },
  });
};
