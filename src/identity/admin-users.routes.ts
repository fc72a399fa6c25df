/**
 * Server administration of users (`/api/admin/users…`), server admins only: the policy allows
 * these actions at server level (org_id null) to nobody else. Modelled on Grafana's admin API.
 * The server must keep at least one enabled server admin, so nobody demotes, disables or
 * deletes themselves, or the last one.
 */
import type { Knex } from 'knex';
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { hashPassword } from '../crypto/password.ts';
import type { Tx } from '../db/transaction.ts';
import { BadRequestError } from '../errors.ts';
import { pageOf, searchQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { DEFAULT_ORG_ID } from '../orgs/store.ts';
import { readThemes } from '../preferences/store.ts';
import { isScimProvisioned } from '../scim/store.ts';
import { clearAttemptsOfUser } from './lockout.ts';
import { assertAcceptablePassword } from './password-policy.ts';
import { adminUserSessionRoutes } from './admin-users.sessions.routes.ts';
import { adminUserMfaRoutes } from './admin-users.mfa.routes.ts';
import { findTargetUser, globalUser, userIdParams } from './admin-users.target.ts';
import { assertNoClash, changeProfile } from './profile.ts';
import { revokeAllSessionsOf, userTarget } from './session-revocation.ts';
import { presentUser } from './user.presenter.ts';
import {
  addOrgMember,
  deleteUser,
  findAuthLabelsOfUsers,
  findHumanUsersPage,
  findMembershipsOfUser,
  findMembershipsOfUsers,
  insertUser,
  lockEnabledServerAdminIds,
  setUserDisabled,
  setUserPassword,
  setUserServerAdmin,
  type UserRow,
} from './users.store.ts';
import { emailSchema, loginSchema, nameSchema, newPasswordSchema, profileSchema } from '../http/schemas.ts';
import { REVOKED_SESSIONS_SCHEMA, USER_PAGE_SCHEMA, USER_SCHEMA } from './user.responses.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

const NEW_USER_ROLE = 'Viewer';

/** Users as the API shows them, with orgs, theme and login labels in three queries for any number. */
async function presentUsers(db: Knex, rows: UserRow[]) {
  const ids = rows.map((row) => row.id);
  const [orgs, themes, labels] = await Promise.all([findMembershipsOfUsers(db, ids), readThemes(db, 'user', ids), findAuthLabelsOfUsers(db, ids)]);
  return rows.map((row) => presentUser(row, orgs.get(row.id) ?? [], { theme: themes.get(row.id), authLabels: labels.get(row.id) ?? [] }));
}

async function presentOne(db: Knex, userId: string) {
  const [user] = await presentUsers(db, [await findTargetUser(db, userId)]);
  return user!;
}

/** Refuses a change that would leave no enabled server admin; call it inside the change's transaction. */
async function assertAnotherServerAdminRemains(tx: Tx, user: UserRow, what: string): Promise<void> {
  if (!user.is_svc_admin || user.is_disabled) return;
  const admins = await lockEnabledServerAdminIds(tx.db);
  if (!admins.some((id) => id !== user.id)) throw new BadRequestError(`cannot ${what} the last server admin`);
}

export const adminUserRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/admin/users',
    access: 'authenticated',
    level: 'server',
    summary: 'Searches the users of the server (not service accounts) by login, email or name.',
    responses: { 200: USER_PAGE_SCHEMA },
    query: searchQuerySchema,
    async handler({ ctx, query, services, authorize }) {
      await authorize('users:read');
      const page = pageOf(query);
      const { totalCount, rows } = await findHumanUsersPage(services.db, query.query?.trim(), page);
      ctx.body = { totalCount, users: await presentUsers(services.db, rows), page: page.page, perPage: page.perPage };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users',
    access: 'authenticated',
    level: 'server',
    summary: 'Creates a user with a password, a Viewer of the default org.',
    responses: { 201: USER_SCHEMA },
    body: {
      type: 'object',
      properties: {
        name: nameSchema,
        login: loginSchema,
        email: emailSchema,
        password: newPasswordSchema,
      },
      required: ['name', 'login', 'email', 'password'],
      additionalProperties: false,
    },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users:create');
      assertAcceptablePassword(body.password, body);
      const passwordHash = await hashPassword(body.password);
      const now = services.clock.now();
      const userId = await services.transact(async (tx) => {
        await assertNoClash(tx, [body.login, body.email]);
        const id = await insertUser(tx.db, { login: body.login, email: body.email, name: body.name, passwordHash, defaultOrgId: DEFAULT_ORG_ID }, now);
        await addOrgMember(tx, DEFAULT_ORG_ID, id, NEW_USER_ROLE, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'user.created',
            orgId: DEFAULT_ORG_ID,
            target: userTarget({ id, login: body.login.toLowerCase() }),
            metadata: { isSvcAdmin: false, orgRole: NEW_USER_ROLE, via: 'admin' },
          },
          now,
        );
        return id;
      });
      ctx.status = 201;
      ctx.body = await presentOne(services.db, userId);
    },
  });

  routes.add({
    method: 'patch',
    path: '/api/admin/users/:userId',
    access: 'authenticated',
    level: 'server',
    summary: "Changes a user's name, email or login.",
    responses: { 200: USER_SCHEMA },
    params: userIdParams,
    body: profileSchema,
    async handler({ ctx, body, params, principal, services, authorize }) {
      await authorize('users:write', globalUser(params.userId));
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const user = await findTargetUser(tx.db, params.userId);
        await changeProfile(tx, actorOf(ctx, principal), user, body, 'admin', now);
      });
      ctx.body = await presentOne(services.db, params.userId);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/admin/users/:userId',
    access: 'authenticated',
    level: 'server',
    summary: 'Deletes a user (never yourself or the last server admin).',
    responses: { 200: MESSAGE_SCHEMA },
    params: userIdParams,
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('users:delete', globalUser(params.userId));
      if (params.userId === principal.user.id) throw new BadRequestError('you cannot delete yourself');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const user = await findTargetUser(tx.db, params.userId);
        await assertAnotherServerAdminRemains(tx, user, 'delete');
        const orgs = await findMembershipsOfUser(tx.db, user.id);
        await deleteUser(tx, user.id);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'user.deleted', target: userTarget(user), metadata: { orgIds: orgs.map((org) => org.orgId) } },
          now,
        );
      });
      ctx.body = { message: 'user deleted' };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/password',
    access: 'authenticated',
    level: 'server',
    summary: "Sets a user's password and ends all their sessions.",
    responses: { 200: REVOKED_SESSIONS_SCHEMA },
    params: userIdParams,
    body: { type: 'object', properties: { password: newPasswordSchema }, required: ['password'], additionalProperties: false },
    async handler({ ctx, body, params, principal, services, authorize }) {
      await authorize('users.password:write', globalUser(params.userId));
      const user = await findTargetUser(services.db, params.userId);
      assertAcceptablePassword(body.password, user);
      const passwordHash = await hashPassword(body.password);
      const now = services.clock.now();
      const revokedSessions = await services.transact(async (tx) => {
        await setUserPassword(tx.db, user.id, passwordHash, now);
        // A reset is how an admin lets a locked-out user back in: the new password works at once.
        const cleared = await clearAttemptsOfUser(tx.db, user.id);
        const actor = actorOf(ctx, principal);
        await recordAudit(
          tx.db,
          actor,
          { action: 'user.password_changed', target: userTarget(user), metadata: { by: 'admin', lockoutCleared: cleared > 0 } },
          now,
        );
        return revokeAllSessionsOf(tx, actor, user, 'password changed by admin', now);
      });
      ctx.body = { message: 'user password updated', revokedSessions };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/permissions',
    access: 'authenticated',
    level: 'server',
    summary: "Grants or removes a user's server admin flag, ending their sessions when it changes.",
    responses: { 200: MESSAGE_SCHEMA },
    params: userIdParams,
    body: { type: 'object', properties: { isSvcAdmin: { type: 'boolean' } }, required: ['isSvcAdmin'], additionalProperties: false },
    async handler({ ctx, body, params, principal, services, authorize }) {
      await authorize('users.permissions:write', globalUser(params.userId));
      if (params.userId === principal.user.id && !body.isSvcAdmin) throw new BadRequestError('you cannot remove your own server admin flag');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const user = await findTargetUser(tx.db, params.userId);
        if (!!user.is_svc_admin === body.isSvcAdmin) return;
        // An org's provisioning token changes its SCIM users; one of them holding the server would reach past that org.
        if (body.isSvcAdmin && (await isScimProvisioned(tx.db, user.id))) throw new BadRequestError('a user provisioned through SCIM cannot be a server admin');
        if (!body.isSvcAdmin) await assertAnotherServerAdminRemains(tx, user, 'demote');
        await setUserServerAdmin(tx.db, user.id, body.isSvcAdmin, now);
        const actor = actorOf(ctx, principal);
        await recordAudit(tx.db, actor, { action: 'user.role_changed', target: userTarget(user), metadata: { isSvcAdmin: body.isSvcAdmin } }, now);
        await revokeAllSessionsOf(tx, actor, user, 'server admin flag changed', now);
      });
      ctx.body = { message: 'user permissions updated' };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/disable',
    access: 'authenticated',
    level: 'server',
    summary: 'Disables a user and ends their sessions (never yourself or the last server admin).',
    responses: { 200: MESSAGE_SCHEMA },
    params: userIdParams,
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('users:disable', globalUser(params.userId));
      if (params.userId === principal.user.id) throw new BadRequestError('you cannot disable yourself');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const user = await findTargetUser(tx.db, params.userId);
        const actor = actorOf(ctx, principal);
        if (!user.is_disabled) {
          await assertAnotherServerAdminRemains(tx, user, 'disable');
          await setUserDisabled(tx.db, user.id, true, now);
          await recordAudit(tx.db, actor, { action: 'user.disabled', target: userTarget(user) }, now);
        }
        // Also when already disabled: a session that outlived an earlier disable must not come back with enable.
        await revokeAllSessionsOf(tx, actor, user, 'user disabled', now);
      });
      ctx.body = { message: 'user disabled' };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/enable',
    access: 'authenticated',
    level: 'server',
    summary: 'Enables a disabled user.',
    responses: { 200: MESSAGE_SCHEMA },
    params: userIdParams,
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('users:enable', globalUser(params.userId));
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const user = await findTargetUser(tx.db, params.userId);
        if (!user.is_disabled) return;
        await setUserDisabled(tx.db, user.id, false, now);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'user.enabled', target: userTarget(user) }, now);
      });
      ctx.body = { message: 'user enabled' };
    },
  });

  adminUserSessionRoutes(routes);
  adminUserMfaRoutes(routes);
};
