/**
 * Server administration of a user's sessions (`/api/admin/users/<userId>/…`): list them, revoke
 * one, revoke all.
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { listPage, listQuerySchema, pageOf } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { revokeAllSessionsOf, userTarget } from './session-revocation.ts';
import { presentSession, sessionLimits } from './sessions.ts';
import { findLiveSessionsOfUserPage, revokeLiveSessionOfUser } from './sessions.store.ts';
import { findTargetUser, globalUser, userIdParams } from './admin-users.target.ts';
import { REVOKED_SESSIONS_SCHEMA, SESSION_PAGE_SCHEMA } from './user.responses.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

export const adminUserSessionRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/admin/users/:userId/auth-tokens',
    access: 'authenticated',
    level: 'server',
    summary: "A user's live sessions, newest first.",
    responses: { 200: SESSION_PAGE_SCHEMA },
    params: userIdParams,
    query: listQuerySchema,
    async handler({ ctx, params, query, principal, services, authorize }) {
      await authorize('users.sessions:read', globalUser(params.userId));
      const user = await findTargetUser(services.db, params.userId);
      const limits = sessionLimits(services.config);
      const page = pageOf(query);
      const sessions = await findLiveSessionsOfUserPage(services.db, user.id, services.clock.now(), limits, page);
      ctx.body = listPage('sessions', page, sessions, (session) => presentSession(session, limits, principal.sessionId));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/revoke-auth-token',
    access: 'authenticated',
    level: 'server',
    summary: "Ends one of a user's sessions (not the one you are using).",
    responses: { 200: MESSAGE_SCHEMA },
    params: userIdParams,
    body: {
      type: 'object',
      properties: { authTokenId: { type: 'string', minLength: 1, maxLength: 40 } },
      required: ['authTokenId'],
      additionalProperties: false,
    },
    async handler({ ctx, body, params, principal, services, authorize }) {
      await authorize('users.sessions:write', globalUser(params.userId));
      const user = await findTargetUser(services.db, params.userId);
      // Grafana's rule: the session you are using ends by logging out, not from the admin pages.
      if (body.authTokenId === principal.sessionId) throw new BadRequestError('you cannot revoke the session you are using: log out instead');
      const now = services.clock.now();
      const revoked = await services.transact(async (tx) => {
        if (!(await revokeLiveSessionOfUser(tx.db, user.id, body.authTokenId, now, sessionLimits(services.config)))) return false;
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'session.revoked', target: userTarget(user), metadata: { count: 1, sessionId: body.authTokenId, reason: 'admin revoke' } },
          now,
        );
        return true;
      });
      if (!revoked) throw new NotFoundError('session not found');
      ctx.body = { message: 'session revoked' };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/users/:userId/logout',
    access: 'authenticated',
    level: 'server',
    summary: "Ends all of a user's sessions (not your own: log out instead).",
    responses: { 200: REVOKED_SESSIONS_SCHEMA },
    params: userIdParams,
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('users.sessions:write', globalUser(params.userId));
      // Grafana's rule: an admin ends their own sessions by logging out.
      if (params.userId === principal.user.id) throw new BadRequestError('you cannot log yourself out from here: use /api/logout');
      const user = await findTargetUser(services.db, params.userId);
      const now = services.clock.now();
      const count = await services.transact((tx) => revokeAllSessionsOf(tx, actorOf(ctx, principal), user, 'admin logout', now, { alwaysRecord: true }));
      ctx.body = { message: 'user logged out', revokedSessions: count };
    },
  });
};
