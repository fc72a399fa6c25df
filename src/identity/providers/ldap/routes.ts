/**
 * Server administration of LDAP, shaped like Grafana's `/api/admin/ldap…`: the servers' status,
 * reloading the config file, syncing one user now, and what a login would map to. Server admins
 * only (these actions are granted by basic:server_admin alone, at server level). Nothing here
 * shows the bind password.
 */
import { recordAudit, recordFailure } from '../../../audit/writer.ts';
import { ConfigError } from '../../../config.ts';
import { ORG_ROLES } from '../../../authz/types.ts';
import { BadRequestError, NotFoundError, ServiceUnavailableError } from '../../../errors.ts';
import { actorOf } from '../../../http/actor.ts';
import type { RouteModule } from '../../../http/route.ts';
import { loginOrEmailSchema } from '../../../http/schemas.ts';
import type { Services } from '../../../services.ts';
import { findTargetUser, globalUser, userIdParams } from '../../admin-users.target.ts';
import { findLinkOfUser } from '../../auth-links.store.ts';
import { revokeAllSessionsOf, userTarget } from '../../session-revocation.ts';
import { lockEnabledServerAdminIds, setUserDisabled } from '../../users.store.ts';
import { LdapServerUnavailable, serverLabel } from './client.ts';
import { isAllowed, mapAccess, type LdapDirectory } from './directory.ts';
import { identityKey, LDAP_AUTH_MODULE, syncDirectoryUser } from './sync.ts';
import { MESSAGE_SCHEMA } from '../../../http/responses.ts';

/** Told after authorize, so that only a server admin learns how the server is configured. */
function enabledDirectory(services: Services): LdapDirectory {
  if (!services.ldap) throw new BadRequestError('LDAP is not enabled (SVC_AUTH_LDAP_ENABLED)');
  return services.ldap;
}

async function findInDirectory(directory: LdapDirectory, login: string) {
  try {
    return await directory.find(login);
  } catch (err) {
    if (err instanceof LdapServerUnavailable) throw new ServiceUnavailableError('no LDAP server could be reached', 30);
    throw err;
  }
}

const SERVER_STATUS_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      host: { type: 'string' },
      port: { type: 'integer' },
      url: { type: 'string' },
      available: { type: 'boolean' },
      error: { type: ['string', 'null'] },
    },
    required: ['host', 'port', 'url', 'available', 'error'],
  },
} as const;

const orgRole = { enum: ORG_ROLES } as const;

const DIRECTORY_USER_SCHEMA = {
  type: 'object',
  properties: {
    dn: { type: 'string' },
    server: { type: 'string' },
    login: { type: 'string' },
    email: { type: ['string', 'null'] },
    name: { type: ['string', 'null'] },
    groups: { type: 'array', items: { type: 'string' } },
    allowed: { type: 'boolean' },
    // null: no mapping of the server states svc_admin, so the flag is not managed by LDAP
    svcAdmin: { type: ['boolean', 'null'] },
    orgRoles: {
      type: 'array',
      items: { type: 'object', properties: { orgId: { type: 'string' }, orgRole }, required: ['orgId', 'orgRole'] },
    },
    matchedMappings: {
      type: 'array',
      items: {
        type: 'object',
        properties: { groupDn: { type: 'string' }, orgId: { type: 'string' }, orgRole, svcAdmin: { type: ['boolean', 'null'] } },
        required: ['groupDn', 'orgId', 'orgRole', 'svcAdmin'],
      },
    },
  },
  required: ['dn', 'server', 'login', 'email', 'name', 'groups', 'allowed', 'svcAdmin', 'orgRoles', 'matchedMappings'],
} as const;

export const ldapAdminRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'get',
    path: '/api/admin/ldap/status',
    access: 'authenticated',
    level: 'server',
    summary: 'Per LDAP server, in order: whether it answers and takes the service bind.',
    responses: { 200: SERVER_STATUS_SCHEMA },
    async handler({ ctx, services, authorize }) {
      await authorize('ldap.status:read');
      ctx.body = await enabledDirectory(services).status();
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/ldap/reload',
    access: 'authenticated',
    level: 'server',
    summary: 'Re-reads the LDAP config file; a bad file keeps the previous config (400).',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, principal, services, authorize }) {
      await authorize('ldap.config:reload');
      const directory = enabledDirectory(services);
      const actor = actorOf(ctx, principal);
      try {
        directory.reload();
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        await recordFailure(services, actor, { action: 'ldap.config_reloaded', metadata: { file: directory.file, reason: err.message } });
        throw new BadRequestError(`${err.message}; the previous LDAP config stays in use`);
      }
      await recordAudit(services.db, actor, { action: 'ldap.config_reloaded', metadata: { file: directory.file } }, services.clock.now());
      ctx.body = { message: 'LDAP config reloaded' };
    },
  });

  routes.add({
    method: 'post',
    path: '/api/admin/ldap/sync/:userId',
    access: 'authenticated',
    level: 'server',
    params: userIdParams,
    summary: 'Syncs one LDAP user from the directory now (disabling it when the directory no longer allows it).',
    responses: { 200: MESSAGE_SCHEMA },
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('ldap.user:sync', globalUser(params.userId));
      const directory = enabledDirectory(services);
      const user = await findTargetUser(services.db, params.userId);
      const link = await findLinkOfUser(services.db, user.id, LDAP_AUTH_MODULE);
      if (!link) throw new BadRequestError(`user ${user.login} does not sign in through LDAP`);
      const match = await findInDirectory(directory, user.login);
      const actor = actorOf(ctx, principal);
      const now = services.clock.now();
      // Gone from the directory (or now another entry, or in no mapped group): as in Grafana, the user is disabled.
      if (!match || identityKey(match.entry.dn) !== link.auth_id || !isAllowed(match)) {
        await services.transact(async (tx) => {
          if (user.is_svc_admin && !(await lockEnabledServerAdminIds(tx.db)).some((id) => id !== user.id)) {
            throw new BadRequestError(`user ${user.login} is no longer allowed by LDAP, but is the last server admin: not disabled`);
          }
          if (!user.is_disabled) {
            await setUserDisabled(tx.db, user.id, true, now);
            await recordAudit(tx.db, actor, { action: 'user.disabled', target: userTarget(user), metadata: { via: LDAP_AUTH_MODULE } }, now);
          }
          await revokeAllSessionsOf(tx, actor, user, 'no longer allowed by LDAP', now);
        });
        ctx.body = { message: `user ${user.login} is no longer allowed by LDAP: disabled` };
        return;
      }
      const outcome = await services.transact((tx) =>
        syncDirectoryUser(tx, { config: services.config, logger: services.logger, actor, now, selfService: false }, match),
      );
      if ('refused' in outcome) throw new BadRequestError(`cannot sync user ${user.login}: ${outcome.refused}`);
      ctx.body = { message: `user ${user.login} synced from LDAP` };
    },
  });

  routes.add({
    method: 'get',
    path: '/api/admin/ldap/:login',
    access: 'authenticated',
    level: 'server',
    params: { type: 'object', properties: { login: loginOrEmailSchema }, required: ['login'] },
    summary: 'What a login finds in the directory and what its group mappings would give it.',
    responses: { 200: DIRECTORY_USER_SCHEMA },
    async handler({ ctx, params, services, authorize }) {
      await authorize('ldap.user:read');
      const match = await findInDirectory(enabledDirectory(services), params.login);
      if (!match) throw new NotFoundError('no LDAP user with that login');
      const { entry, server } = match;
      const access = mapAccess(server, entry);
      ctx.body = {
        dn: entry.dn,
        server: serverLabel(server),
        login: entry.username,
        email: entry.email,
        name: entry.name,
        groups: entry.groups,
        allowed: isAllowed(match),
        svcAdmin: access.svcAdmin,
        orgRoles: [...access.orgRoles].map(([orgId, orgRole]) => ({ orgId, orgRole })),
        matchedMappings: access.matched.map((mapping) => ({
          groupDn: mapping.groupDn,
          orgId: mapping.orgId,
          orgRole: mapping.orgRole,
          svcAdmin: mapping.svcAdmin,
        })),
      };
    },
  });
};
