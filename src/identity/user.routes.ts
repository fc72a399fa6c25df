/** The current user: profile, password, preferences, default org, permissions (`/api/user…`). */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { hashPassword } from '../crypto/password.ts';
import { clientIp } from '../http/client-ip.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { permissionDenied, type RouteModule } from '../http/route.ts';
import { ownRecord } from '../http/subject.ts';
import { findOrgById } from '../orgs/store.ts';
import { preferencesSchema, readPreferences, writePreferences } from '../preferences/store.ts';
import type { Services } from '../services.ts';
import { findLinkOfUser } from './auth-links.store.ts';
import { assertAcceptablePassword } from './password-policy.ts';
import { LDAP_AUTH_MODULE } from './providers/ldap/sync.ts';
import { changeProfile, profileChanges } from './profile.ts';
import { confirmOwnPassword } from './reauthenticate.ts';
import { revokeAllSessionsOf, userTarget } from './session-revocation.ts';
import { presentUser } from './user.presenter.ts';
import { findAuthLabelsOfUsers, findMembershipsOfUser, findUserById, setDefaultOrg, setUserPassword } from './users.store.ts';
import { newPasswordSchema, profileSchema } from '../http/schemas.ts';
import { PERMISSION_MAP_SCHEMA } from '../accesscontrol/presenter.ts';
import { USER_PREFERENCES_SCHEMA, USER_SCHEMA } from './user.responses.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

async function currentProfile(services: Services, userId: string) {
  const profile = await services.caches.profiles.get(userId, services.clock.now(), async () => {
    const user = await findUserById(services.db, userId);
    if (!user) return null;
    const [orgs, prefs, labels] = await Promise.all([
      findMembershipsOfUser(services.db, user.id),
      readPreferences(services.db, 'user', user.id),
      findAuthLabelsOfUsers(services.db, [user.id]),
    ]);
    return { user, orgs, theme: prefs.theme, authLabels: labels.get(user.id) ?? [] };
  });
  if (!profile) throw new NotFoundError('user not found');
  return presentUser(profile.user, profile.orgs, { theme: profile.theme, authLabels: profile.authLabels });
}

/**
 * A user's own profile change: changing what signs in (email, login) of an account with a local
 * password needs that password too, so a stolen session cannot take the account over.
 */
const ownProfileSchema = {
  ...profileSchema,
  properties: { ...profileSchema.properties, currentPassword: { type: 'string', minLength: 1, maxLength: 1024 } },
} as const;

/** Why an account without a local password cannot change one here. */
async function noLocalPasswordReason(services: Services, userId: string): Promise<string> {
  if (await findLinkOfUser(services.db, userId, LDAP_AUTH_MODULE)) return 'this account signs in through LDAP: change your password in the directory';
  return 'this account has no local password';
}

export const currentUserRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/user',
    access: 'authenticated',
    level: 'server',
    beforeMfaEnrolment: true,
    summary: "The signed-in user's profile, orgs and login labels.",
    responses: { 200: USER_SCHEMA },
    async handler({ ctx, principal, services, authorize }) {
      await authorize('users:read', ownRecord(principal));
      ctx.body = await currentProfile(services, principal.user.id);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/user',
    access: 'authenticated',
    level: 'server',
    summary: "Changes the signed-in user's profile (email or login need the current password).",
    responses: { 200: USER_SCHEMA },
    body: ownProfileSchema,
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users:write', ownRecord(principal));
      const { currentPassword, ...profile } = body;
      const current = await findUserById(services.db, principal.user.id);
      if (!current) throw new NotFoundError('user not found');
      const changes = profileChanges(current, profile);
      if (current.password_hash && (changes.email !== undefined || changes.login !== undefined)) {
        if (currentPassword === undefined) throw new BadRequestError('give your current password (currentPassword) to change your email or login');
        await confirmOwnPassword(
          services.db,
          services.clock,
          clientIp(ctx),
          { id: current.id, password_hash: current.password_hash },
          currentPassword,
          'the current password is not correct',
        );
      }
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const user = await findUserById(tx.db, principal.user.id);
        if (!user) throw new NotFoundError('user not found');
        await changeProfile(tx, actorOf(ctx, principal), user, profile, 'self', now);
      });
      ctx.body = await currentProfile(services, principal.user.id);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/user/password',
    access: 'authenticated',
    level: 'server',
    summary: "Changes the signed-in user's password and ends their other sessions.",
    responses: { 200: MESSAGE_SCHEMA },
    body: {
      type: 'object',
      properties: {
        oldPassword: { type: 'string', minLength: 1, maxLength: 1024 },
        newPassword: newPasswordSchema,
      },
      required: ['oldPassword', 'newPassword'],
      additionalProperties: false,
    },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.password:write', ownRecord(principal));
      const user = await findUserById(services.db, principal.user.id);
      if (!user?.password_hash) throw new BadRequestError(await noLocalPasswordReason(services, principal.user.id));
      await confirmOwnPassword(
        services.db,
        services.clock,
        clientIp(ctx),
        { id: user.id, password_hash: user.password_hash },
        body.oldPassword,
        'the old password is not correct',
      );
      assertAcceptablePassword(body.newPassword, user);
      const passwordHash = await hashPassword(body.newPassword);
      const now = services.clock.now();
      await services.transact(async (tx) => {
        await setUserPassword(tx.db, user.id, passwordHash, now);
        const actor = actorOf(ctx, principal);
        await recordAudit(tx.db, actor, { action: 'user.password_changed', target: userTarget(user), metadata: { by: 'self' } }, now);
        await revokeAllSessionsOf(tx, actor, user, 'password changed', now, { keep: principal.sessionId });
      });
      ctx.body = { message: 'password changed' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/user/preferences',
    access: 'authenticated',
    level: 'server',
    summary: "The signed-in user's preferences (home dashboard, timezone, theme).",
    responses: { 200: USER_PREFERENCES_SCHEMA },
    async handler({ ctx, principal, services, authorize }) {
      await authorize('users.preferences:read', ownRecord(principal));
      ctx.body = await readPreferences(services.db, 'user', principal.user.id);
    },
  });

  routes.add({
    method: 'put',
    path: '/api/user/preferences',
    access: 'authenticated',
    level: 'server',
    summary: "Replaces the signed-in user's preferences; an omitted one goes back to its default.",
    responses: { 200: USER_PREFERENCES_SCHEMA },
    body: preferencesSchema,
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.preferences:write', ownRecord(principal));
      const now = services.clock.now();
      ctx.body = await services.transact(async (tx) => {
        const saved = await writePreferences(tx.db, 'user', principal.user.id, body, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'user.preferences_updated', target: { type: 'user', id: principal.user.id, name: principal.user.login } },
          now,
        );
        return saved;
      });
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/using/:orgId',
    access: 'authenticated',
    level: 'server',
    summary: "Makes one of the signed-in user's orgs their default (active) org.",
    responses: { 200: MESSAGE_SCHEMA },
    params: { type: 'object', properties: { orgId: { type: 'string', maxLength: 40 } }, required: ['orgId'] },
    async handler({ ctx, params, principal, services, authorize }) {
      // The policy requires membership of the org; an org that does not exist gets the same
      // refusal, so the answer does not tell which org ids exist.
      const org = await findOrgById(services.db, params.orgId);
      await authorize('users:write', ownRecord(principal), { orgId: org ? org.id : null });
      if (!org) throw permissionDenied('users:write');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        await setDefaultOrg(tx.db, principal.user.id, org.id, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'user.org_switched', orgId: org.id, target: { type: 'user', id: principal.user.id, name: principal.user.login } },
          now,
        );
      });
      ctx.body = { message: 'active organization changed' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/user/permissions',
    access: 'authenticated',
    level: 'org',
    summary: 'What the signed-in user holds in the active org: {action: [scope]}.',
    responses: { 200: PERMISSION_MAP_SCHEMA },
    async handler({ ctx, principal, authorize, permissions }) {
      await authorize('users.permissions:read', ownRecord(principal));
      ctx.body = await permissions();
    },
  });
};
