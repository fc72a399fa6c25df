/**
 * Tokens of a service account (`/api/serviceaccounts/<id>/tokens…`): list their metadata, issue
 * one (its key shown once, in the response), revoke one. Reading them is reading the account;
 * issuing and revoking are writing it.
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { NotFoundError } from '../errors.ts';
import { listPage, listQuerySchema, pageOf } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { presentTokenMetadata } from '../identity/api-tokens.ts';
import { findApiTokenOfUser, findApiTokensOfUserPage, revokeApiToken } from '../identity/api-tokens.store.ts';
import { lockQuotaOwner } from '../quotas/store.ts';
import { ISSUED_KEY_SCHEMA, serviceAccountResource } from './presenter.ts';
import { findServiceAccountOrFail } from './store.ts';
import { issueServiceAccountToken, newTokenSchema } from './tokens.ts';
import { idSchema } from '../http/schemas.ts';
import { MESSAGE_SCHEMA, listPageSchema } from '../http/responses.ts';
import { TOKEN_METADATA_SCHEMA } from '../identity/user.responses.ts';

const accountParams = { type: 'object', properties: { id: idSchema }, required: ['id'] } as const;
const tokenParams = { type: 'object', properties: { id: idSchema, tokenId: idSchema }, required: ['id', 'tokenId'] } as const;

const tokenAuditTarget = (token: { id: string; name: string }) => ({ type: 'service_account_token', id: token.id, name: token.name });

export const serviceAccountTokenRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/serviceaccounts/:id/tokens',
    access: 'authenticated',
    level: 'org',
    params: accountParams,
    query: listQuerySchema,
    summary: 'The tokens of a service account (metadata, never keys), one page.',
    responses: { 200: listPageSchema('tokens', TOKEN_METADATA_SCHEMA) },
    async handler({ ctx, params, query, orgId, services, authorize }) {
      await authorize('serviceaccounts:read', serviceAccountResource(params.id));
      const account = await findServiceAccountOrFail(services.db, orgId, params.id);
      const now = services.clock.now();
      const page = pageOf(query);
      ctx.body = listPage('tokens', page, await findApiTokensOfUserPage(services.db, 'sa', account.id, page), (row) => presentTokenMetadata(row, now));
    },
  });

  routes.add({
    method: 'post',
    path: '/api/serviceaccounts/:id/tokens',
    access: 'authenticated',
    level: 'org',
    params: accountParams,
    body: newTokenSchema,
    summary: 'Issues a token of a service account; its key is shown in this answer only.',
    responses: { 201: ISSUED_KEY_SCHEMA },
    async handler({ ctx, body, params, orgId, principal, services, authorize }) {
      await authorize('serviceaccounts:write', serviceAccountResource(params.id));
      const now = services.clock.now();
      const issued = await services.transact(async (tx) => {
        // Lock before the first read: on MySQL that read would fix the snapshot the quota counts in.
        await lockQuotaOwner(tx.db, 'orgs', orgId);
        const account = await findServiceAccountOrFail(tx.db, orgId, params.id, true);
        const token = await issueServiceAccountToken(tx, services.config, account, body, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'service_account.token_issued',
            orgId,
            target: tokenAuditTarget({ id: token.id, name: body.name }),
            metadata: { serviceAccountId: account.id, secondsToLive: body.secondsToLive ?? null },
          },
          now,
        );
        return token;
      });
      ctx.status = 201;
      ctx.body = { id: issued.id, name: body.name, key: issued.key };
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/serviceaccounts/:id/tokens/:tokenId',
    access: 'authenticated',
    level: 'org',
    params: tokenParams,
    summary: 'Revokes a token of a service account.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, orgId, principal, services, authorize }) {
      await authorize('serviceaccounts:write', serviceAccountResource(params.id));
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const account = await findServiceAccountOrFail(tx.db, orgId, params.id, true);
        const token = await findApiTokenOfUser(tx.db, 'sa', account.id, params.tokenId);
        if (!token) throw new NotFoundError(`token ${params.tokenId} not found`);
        if (await revokeApiToken(tx.db, token.id, now)) {
          await recordAudit(
            tx.db,
            actorOf(ctx, principal),
            { action: 'service_account.token_revoked', orgId, target: tokenAuditTarget(token), metadata: { serviceAccountId: account.id } },
            now,
          );
        }
      });
      ctx.body = { message: 'service account token revoked' };
    },
  });
};
