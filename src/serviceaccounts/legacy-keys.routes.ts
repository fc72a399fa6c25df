/**
 * The legacy API-key endpoints, kept as a compatibility shim over service accounts
 * (`/api/auth/keys`), and the migration of the deprecated API_KEYS variable
 * (`POST /api/serviceaccounts/migrate`, server admins). Legacy keys are org-wide, so the shim
 * asks for the service-account actions on every account of the org.
 */
import { actorOf } from '../http/actor.ts';
import { listPage, pageOf, paginationQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { createLegacyKey, deleteLegacyKey, migrateLegacyKeys } from './legacy-keys.ts';
import { ISSUED_KEY_SCHEMA, LEGACY_KEY_SCHEMA, presentLegacyKey } from './presenter.ts';
import { findLegacyKeysPage, permissionsOfOrgRole, SERVICE_ACCOUNT_ROLES } from './store.ts';
import { MAX_SECONDS_TO_LIVE } from './tokens.ts';
import { nonBlankNameSchema } from '../http/schemas.ts';
import { MESSAGE_SCHEMA, listPageSchema } from '../http/responses.ts';

const everyServiceAccount = { scope: 'serviceaccounts:*' };

/** Each API_KEYS entry with its account and token; `created: false` when it was migrated before. */
const MIGRATION_SCHEMA = {
  type: 'object',
  properties: {
    migrated: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, serviceAccountId: { type: 'string' }, tokenId: { type: 'string' }, created: { type: 'boolean' } },
        required: ['name', 'serviceAccountId', 'tokenId', 'created'],
      },
    },
  },
  required: ['migrated'],
} as const;

export const legacyKeyRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/auth/keys',
    access: 'authenticated',
    level: 'org',
    query: {
      type: 'object',
      // orgId: the active org may be chosen with ?orgId (the route layer reads it).
      properties: { ...paginationQuerySchema, includeExpired: { type: 'boolean', default: false } },
      additionalProperties: false,
    },
    summary: "The active org's legacy API keys (live ones unless includeExpired), one page.",
    responses: { 200: listPageSchema('keys', LEGACY_KEY_SCHEMA) },
    async handler({ ctx, query, orgId, services, authorize }) {
      await authorize('serviceaccounts:read', everyServiceAccount);
      const page = pageOf(query);
      ctx.body = listPage(
        'keys',
        page,
        await findLegacyKeysPage(services.db, orgId, services.clock.now(), query.includeExpired ?? false, page),
        presentLegacyKey,
      );
    },
  });

  routes.add({
    method: 'post',
    path: '/api/auth/keys',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: {
        name: { ...nonBlankNameSchema, maxLength: 100 },
        role: { type: 'string', enum: SERVICE_ACCOUNT_ROLES },
        secondsToLive: { type: 'integer', minimum: 1, maximum: MAX_SECONDS_TO_LIVE },
      },
      required: ['name', 'role'],
      additionalProperties: false,
    },
    summary: 'Creates a legacy API key in the active org (a hidden service account with one token); its key is shown in this answer only.',
    responses: { 201: ISSUED_KEY_SCHEMA },
    async handler({ ctx, body, orgId, principal, services, authorize }) {
      // The key acts with the role, so the caller must hold every permission of it (delegation).
      await authorize('serviceaccounts:write', everyServiceAccount, { delegate: await permissionsOfOrgRole(services.db, orgId, body.role) });
      const now = services.clock.now();
      const created = await services.transact((tx) =>
        createLegacyKey(tx, services.config, actorOf(ctx, principal), orgId, { ...body, name: body.name.trim() }, now),
      );
      ctx.status = 201;
      ctx.body = created;
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/auth/keys/:id',
    access: 'authenticated',
    level: 'org',
    params: { type: 'object', properties: { id: { type: 'string', minLength: 1, maxLength: 40 } }, required: ['id'] },
    summary: 'Deletes a legacy API key, and its hidden service account once it holds no live key.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, orgId, principal, services, authorize }) {
      await authorize('serviceaccounts:delete', everyServiceAccount);
      const now = services.clock.now();
      await services.transact((tx) => deleteLegacyKey(tx, actorOf(ctx, principal), orgId, params.id, now));
      ctx.body = { message: 'API key deleted' };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/serviceaccounts/migrate',
    access: 'authenticated',
    level: 'server',
    summary: 'Migrates the API_KEYS entries into hidden service accounts of the main org.',
    responses: { 200: MIGRATION_SCHEMA },
    async handler({ ctx, principal, services, authorize }) {
      await authorize('serviceaccounts:migrate');
      const now = services.clock.now();
      const migrated = await services.transact((tx) => migrateLegacyKeys(tx, actorOf(ctx, principal), services.config.apiKeys, now));
      ctx.body = { migrated };
    },
  });
};
