/** The current user's sessions and external login links (`/api/user/tokens`, `/api/user/auth-tokens`). */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import { listPage, listQuerySchema, pageOf } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { ownRecord } from '../http/subject.ts';
import { countAuthLinksOfUser, deleteAuthLinkOfUser, findAuthLinkOfUser, findAuthLinksOfUserPage, presentAuthLink } from './auth-links.store.ts';
import { lockUser } from './users.store.ts';
import { presentSession, sessionLimits } from './sessions.ts';
import { findLiveSessionsOfUserPage, revokeLiveSessionOfUser } from './sessions.store.ts';
import { AUTH_LINK_PAGE_SCHEMA, SESSION_PAGE_SCHEMA } from './user.responses.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

export const currentUserSessionRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/user/tokens',
    access: 'authenticated',
    level: 'server',
    summary: "The signed-in user's live sessions, newest first.",
    responses: { 200: SESSION_PAGE_SCHEMA },
    query: listQuerySchema,
    async handler({ ctx, query, principal, services, authorize }) {
      await authorize('users.sessions:read', ownRecord(principal));
      const limits = sessionLimits(services.config);
      const page = pageOf(query);
      const sessions = await findLiveSessionsOfUserPage(services.db, principal.user.id, services.clock.now(), limits, page);
      ctx.body = listPage('sessions', page, sessions, (session) => presentSession(session, limits, principal.sessionId));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/revoke-auth-token',
    access: 'authenticated',
    level: 'server',
    summary: "Ends one of the signed-in user's sessions.",
    responses: { 200: MESSAGE_SCHEMA },
    body: {
      type: 'object',
      properties: { authTokenId: { type: 'string', minLength: 1, maxLength: 40 } },
      required: ['authTokenId'],
      additionalProperties: false,
    },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.sessions:write', ownRecord(principal));
      const now = services.clock.now();
      const revoked = await services.transact(async (tx) => {
        if (!(await revokeLiveSessionOfUser(tx.db, principal.user.id, body.authTokenId, now, sessionLimits(services.config)))) return false;
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'session.revoked', target: { type: 'session', id: body.authTokenId }, metadata: { by: 'self' } },
          now,
        );
        return true;
      });
      if (!revoked) throw new NotFoundError('session not found');
      ctx.body = { message: 'session revoked' };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/user/auth-tokens',
    access: 'authenticated',
    level: 'server',
    summary: 'The external logins (LDAP, OAuth, SAML) linked to the signed-in user.',
    responses: { 200: AUTH_LINK_PAGE_SCHEMA },
    query: listQuerySchema,
    async handler({ ctx, query, principal, services, authorize }) {
      await authorize('users.authlinks:read', ownRecord(principal));
      const page = pageOf(query);
      ctx.body = listPage('authLinks', page, await findAuthLinksOfUserPage(services.db, principal.user.id, page), presentAuthLink);
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/user/auth-tokens/:id',
    access: 'authenticated',
    level: 'server',
    summary: 'Unlinks an external login from the signed-in user, unless it is their only way in.',
    responses: { 200: MESSAGE_SCHEMA },
    params: { type: 'object', properties: { id: { type: 'string', maxLength: 40 } }, required: ['id'] },
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('users.authlinks:write', ownRecord(principal));
      const now = services.clock.now();
      const removed = await services.transact(async (tx) => {
        // Locked first, so two removals at once cannot both see another link left.
        const user = await lockUser(tx.db, principal.user.id);
        if (!(await findAuthLinkOfUser(tx.db, principal.user.id, params.id))) return undefined;
        if (user && !user.password_hash && (await countAuthLinksOfUser(tx.db, user.id)) <= 1) {
          throw new BadRequestError('cannot remove the only way you can sign in: this account has no password and no other login');
        }
        const link = await deleteAuthLinkOfUser(tx.db, principal.user.id, params.id);
        if (link) {
          await recordAudit(
            tx.db,
            actorOf(ctx, principal),
            {
              action: 'user.auth_link_removed',
              target: { type: 'user', id: principal.user.id, name: principal.user.login },
              metadata: { authModule: link.auth_module },
            },
            now,
          );
        }
        return link;
      });
      if (!removed) throw new NotFoundError('login link not found');
      ctx.body = { message: 'login link removed' };
    },
  });
};
