/**
 * Service accounts of the active org (`/api/serviceaccounts…`), modelled on Grafana's API: create,
 * search, read, update (name, role, disabled) and delete; their tokens are in tokens.routes.ts.
 * Handing an account a role is delegation: the caller must hold every permission of that role,
 * so nobody mints a token stronger than themselves.
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import { ConflictError } from '../errors.ts';
import { pageOf, searchQuerySchema } from '../http/pagination.ts';
import type { RouteModule } from '../http/route.ts';
import { countLiveTokens, countLiveTokensOfOne } from '../identity/api-tokens.store.ts';
import { enforceOrgQuota } from '../quotas/org-quotas.ts';
import {
  presentServiceAccount,
  presentServiceAccountWithTokens,
  SERVICE_ACCOUNT_SCHEMA,
  SERVICE_ACCOUNT_WITH_TOKENS_SCHEMA,
  serviceAccountAuditTarget,
  serviceAccountResource,
} from './presenter.ts';
import {
  deleteServiceAccount,
  findServiceAccountByName,
  lockServiceAccountNames,
  findServiceAccountOrFail,
  findServiceAccountsPage,
  insertServiceAccount,
  permissionsOfOrgRole,
  SERVICE_ACCOUNT_ROLES,
  updateServiceAccount,
} from './store.ts';
import { serviceAccountTokenRoutes } from './tokens.routes.ts';
import { nonBlankNameSchema } from '../http/schemas.ts';
import { MESSAGE_SCHEMA, listPageSchema } from '../http/responses.ts';

/** `?orgId` selects the active org (the route layer reads it); the schema must let it through. */
const roleSchema = { type: 'string', enum: SERVICE_ACCOUNT_ROLES } as const;
const serviceAccountIdParams = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 40 } },
  required: ['id'],
} as const;

export const serviceAccountRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/serviceaccounts',
    access: 'authenticated',
    level: 'org',
    body: {
      type: 'object',
      properties: { name: nonBlankNameSchema, role: roleSchema, isDisabled: { type: 'boolean' } },
      required: ['name', 'role'],
      additionalProperties: false,
    },
    summary: 'Creates a service account in the active org.',
    responses: { 201: SERVICE_ACCOUNT_SCHEMA },
    async handler({ ctx, body, orgId, principal, services, authorize }) {
      await authorize('serviceaccounts:create', undefined, { delegate: await permissionsOfOrgRole(services.db, orgId, body.role) });
      const now = services.clock.now();
      const name = body.name.trim();
      const account = await services.transact(async (tx) => {
        await enforceOrgQuota(tx, services.config, orgId, 'service_accounts', now);
        const created = await insertServiceAccount(tx, { orgId, name, role: body.role, isDisabled: body.isDisabled ?? false, isHidden: false }, now);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          {
            action: 'service_account.created',
            orgId,
            target: serviceAccountAuditTarget(created),
            metadata: { login: created.login, role: created.role, isDisabled: !!created.is_disabled },
          },
          now,
        );
        return created;
      });
      ctx.status = 201;
      ctx.body = presentServiceAccount(account);
    },
  });

  // Before /:id, so that "search" is not taken for an id.
  routes.add({
    method: 'get',
    path: '/api/serviceaccounts/search',
    access: 'authenticated',
    level: 'org',
    query: searchQuerySchema,
    summary: "Searches the active org's service accounts by name or login, one page.",
    responses: { 200: listPageSchema('serviceAccounts', SERVICE_ACCOUNT_WITH_TOKENS_SCHEMA) },
    async handler({ ctx, query, orgId, services, authorize }) {
      await authorize('serviceaccounts:read');
      const page = pageOf(query);
      const { totalCount, rows } = await findServiceAccountsPage(services.db, orgId, query.query?.trim(), page);
      const tokens = await countLiveTokens(
        services.db,
        'sa',
        rows.map((row) => row.id),
        services.clock.now(),
      );
      ctx.body = {
        totalCount,
        serviceAccounts: rows.map((row) => presentServiceAccountWithTokens(row, tokens.get(row.id) ?? 0)),
        page: page.page,
        perPage: page.perPage,
      };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/serviceaccounts/:id',
    access: 'authenticated',
    level: 'org',
    params: serviceAccountIdParams,
    summary: 'A service account of the active org, with the number of its live tokens.',
    responses: { 200: SERVICE_ACCOUNT_WITH_TOKENS_SCHEMA },
    async handler({ ctx, params, orgId, services, authorize }) {
      await authorize('serviceaccounts:read', serviceAccountResource(params.id));
      const account = await findServiceAccountOrFail(services.db, orgId, params.id);
      ctx.body = presentServiceAccountWithTokens(account, await countLiveTokensOfOne(services.db, 'sa', account.id, services.clock.now()));
    },
  });

  routes.add({
    method: 'patch',
    path: '/api/serviceaccounts/:id',
    access: 'authenticated',
    level: 'org',
    params: serviceAccountIdParams,
    body: {
      type: 'object',
      properties: { name: nonBlankNameSchema, role: roleSchema, isDisabled: { type: 'boolean' } },
      minProperties: 1,
      additionalProperties: false,
    },
    summary: "Changes a service account's name, role or disabled state.",
    responses: { 200: SERVICE_ACCOUNT_WITH_TOKENS_SCHEMA },
    async handler({ ctx, body, params, orgId, principal, services, authorize }) {
      const delegate = body.role ? await permissionsOfOrgRole(services.db, orgId, body.role) : undefined;
      await authorize('serviceaccounts:write', serviceAccountResource(params.id), { delegate });
      const now = services.clock.now();
      const account = await services.transact(async (tx) => {
        const name = body.name?.trim();
        // The org before the account, in the order a token's issue takes them.
        if (name !== undefined) await lockServiceAccountNames(tx.db, orgId);
        const current = await findServiceAccountOrFail(tx.db, orgId, params.id, true);
        const changes = {
          ...(name !== undefined && name !== current.name && { name }),
          ...(body.role !== undefined && body.role !== current.role && { role: body.role }),
          ...(body.isDisabled !== undefined && body.isDisabled !== !!current.is_disabled && { isDisabled: body.isDisabled }),
        };
        if (Object.keys(changes).length === 0) return current;
        if (changes.name) {
          const namesake = await findServiceAccountByName(tx.db, orgId, changes.name);
          if (namesake && namesake.id !== current.id) throw new ConflictError(`a service account named "${changes.name}" already exists`);
        }
        await updateServiceAccount(tx, current, changes, now);
        const updated = {
          ...current,
          ...(changes.name && { name: changes.name }),
          ...(changes.role && { role: changes.role }),
          ...(changes.isDisabled !== undefined && { is_disabled: changes.isDisabled }),
        };
        const actor = actorOf(ctx, principal);
        const target = serviceAccountAuditTarget(updated);
        const fields = Object.keys(changes)
          .filter((field) => field !== 'isDisabled')
          .sort();
        if (fields.length > 0) {
          await recordAudit(
            tx.db,
            actor,
            { action: 'service_account.updated', orgId, target, metadata: { fields, ...(changes.role && { role: changes.role, previousRole: current.role }) } },
            now,
          );
        }
        if (changes.isDisabled !== undefined) {
          // Its tokens are kept: disabling freezes them, enabling thaws those neither revoked nor expired.
          await recordAudit(tx.db, actor, { action: changes.isDisabled ? 'service_account.disabled' : 'service_account.enabled', orgId, target }, now);
        }
        return updated;
      });
      ctx.body = presentServiceAccountWithTokens(account, await countLiveTokensOfOne(services.db, 'sa', account.id, now));
    },
  });

  routes.add({
    method: 'delete',
    path: '/api/serviceaccounts/:id',
    access: 'authenticated',
    level: 'org',
    params: serviceAccountIdParams,
    summary: 'Deletes a service account and its tokens.',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, orgId, principal, services, authorize }) {
      await authorize('serviceaccounts:delete', serviceAccountResource(params.id));
      const now = services.clock.now();
      await services.transact(async (tx) => {
        const account = await findServiceAccountOrFail(tx.db, orgId, params.id, true);
        const liveTokens = await countLiveTokensOfOne(tx.db, 'sa', account.id, now);
        await deleteServiceAccount(tx, account);
        await recordAudit(
          tx.db,
          actorOf(ctx, principal),
          { action: 'service_account.deleted', orgId, target: serviceAccountAuditTarget(account), metadata: { login: account.login, liveTokens } },
          now,
        );
      });
      ctx.body = { message: 'service account deleted' };
    },
  });

  serviceAccountTokenRoutes(routes);
};
