/** Personal access tokens of the current user (`/api/user/access-tokens`). */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { NotFoundError } from '../errors.ts';
import { listPage, listQuerySchema, pageOf } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { ownRecord } from '../http/subject.ts';
import { assertWithinQuota, lockQuotaOwner } from '../quotas/store.ts';
import { userQuotaLimit } from '../quotas/user-quotas.ts';
import { newTokenKey, presentTokenMetadata } from './api-tokens.ts';
import { countLiveTokensOfOne, findApiTokenOfUser, findApiTokensOfUserPage, insertApiToken, revokeApiToken } from './api-tokens.store.ts';
import { nameSchema } from '../http/schemas.ts';
import { NEW_TOKEN_SCHEMA, TOKEN_PAGE_SCHEMA } from './user.responses.ts';
import { MESSAGE_SCHEMA } from '../http/responses.ts';

export const currentUserAccessTokenRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/user/access-tokens',
    access: 'authenticated',
    level: 'server',
    summary: "The signed-in user's personal access tokens (never their keys), newest first.",
    responses: { 200: TOKEN_PAGE_SCHEMA },
    query: listQuerySchema,
    async handler({ ctx, query, principal, services, authorize }) {
      await authorize('users.tokens:read', ownRecord(principal));
      const now = services.clock.now();
      const page = pageOf(query);
      ctx.body = listPage('tokens', page, await findApiTokensOfUserPage(services.db, 'pat', principal.user.id, page), (row) => presentTokenMetadata(row, now));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/user/access-tokens',
    access: 'authenticated',
    level: 'server',
    summary: 'Issues a personal access token; the answer is the only one that holds its key.',
    responses: { 201: NEW_TOKEN_SCHEMA },
    body: {
      type: 'object',
      properties: {
        name: nameSchema,
        secondsToLive: { type: 'integer', minimum: 1, maximum: 10 * 365 * 86_400 },
      },
      required: ['name'],
      additionalProperties: false,
    },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.tokens:write', ownRecord(principal));
      const now = services.clock.now();
      const { key, hash } = newTokenKey('pat');
      const id = await services.transact(async (tx) => {
        await lockQuotaOwner(tx.db, 'users', principal.user.id);
        const limit = await userQuotaLimit(tx.db, principal.user.id, 'api_keys');
        assertWithinQuota('api_keys', limit, await countLiveTokensOfOne(tx.db, 'pat', principal.user.id, now));
        const tokenId = await insertApiToken(
          tx.db,
          {
            kind: 'pat',
            userId: principal.user.id,
            orgId: null,
            name: body.name,
            tokenHash: hash,
            expiresAt: body.secondsToLive ? now + body.secondsToLive * 1000 : null,
          },
          now,
        );
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'user.token_issued',
            target: { type: 'access_token', id: tokenId, name: body.name },
            metadata: { secondsToLive: body.secondsToLive ?? null },
          },
          now,
        );
        return tokenId;
      });
      ctx.status = 201;
      ctx.body = { id, name: body.name, key };
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/user/access-tokens/:id',
    access: 'authenticated',
    level: 'server',
    summary: "Revokes one of the signed-in user's personal access tokens.",
    responses: { 200: MESSAGE_SCHEMA },
    params: { type: 'object', properties: { id: { type: 'string', maxLength: 40 } }, required: ['id'] },
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('users.tokens:write', ownRecord(principal));
      const token = await findApiTokenOfUser(services.db, 'pat', principal.user.id, params.id);
      if (!token) throw new NotFoundError('access token not found');
      const now = services.clock.now();
      await services.transact(async (tx) => {
        if (await revokeApiToken(tx.db, token.id, now)) {
          await recordAudit(
            tx.db,
            actorOf(ctx, principal),
            { action: 'user.token_revoked', target: { type: 'access_token', id: token.id, name: token.name } },
            now,
          );
        }
      });
      ctx.body = { message: 'access token revoked' };
    },
  });
};
