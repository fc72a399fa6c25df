/**
 * `POST /api/user/auth-links/ldap`: a signed-in user ties a directory entry to their account, after
 * proving again who they are (password, or a recent sign-in) and proving the entry theirs (its
 * password binds). Wrong directory passwords count in the lockout of that directory login, as at
 * the login form, so the route is no better a guessing oracle than the form.
 */
import { recordFailure } from '../../../audit/writer.ts';
import { BadRequestError, ConflictError, UnauthorizedError } from '../../../errors.ts';
import { actorOf } from '../../../http/actor.ts';
import { clientIp } from '../../../http/client-ip.ts';
import type { RouteModule } from '../../../http/route.ts';
import { ownRecord } from '../../../http/subject.ts';
import { presentAuthLink, findLinkOfUser } from '../../auth-links.store.ts';
import { clearAttempts, lockedOut, lockoutKey, takeAttemptSlot } from '../../lockout.ts';
import { reauthenticateToLink } from '../../reauthenticate.ts';
import { ExternalLoginError } from '../types.ts';
import { LDAP_AUTH_MODULE, linkDirectoryEntry } from './sync.ts';

const AUTH_LINK_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    authModule: { type: 'string' },
    label: { type: 'string' },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
  },
  required: ['id', 'authModule', 'label', 'createdAt', 'updatedAt'],
  additionalProperties: false,
} as const;

export const ldapLinkRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'post',
    path: '/api/user/auth-links/ldap',
    access: 'authenticated',
    level: 'server',
    body: {
      type: 'object',
      properties: {
        password: { type: 'string', minLength: 1, maxLength: 1024 },
        ldapLogin: { type: 'string', minLength: 1, maxLength: 190 },
        ldapPassword: { type: 'string', minLength: 1, maxLength: 1024 },
      },
      required: ['ldapLogin', 'ldapPassword'],
      additionalProperties: false,
    },
    summary:
      "Links a directory entry to the signed-in account: the account's password (or a sign-in in the last 10 minutes) and the entry's login and password.",
    responses: { 201: AUTH_LINK_SCHEMA },
    async handler({ ctx, body, principal, services, authorize }) {
      await authorize('users.authlinks:write', ownRecord(principal));
      const directory = services.ldap;
      if (!directory) throw new BadRequestError('LDAP is not enabled on this server');
      await reauthenticateToLink(services.db, services.clock, clientIp(ctx), principal, body.password);
      const actor = actorOf(ctx, principal);
      const refuse = async (message: string, reason: string) => {
        await recordFailure(services, actor, {
          action: 'user.auth_link_added',
          target: { type: 'user', id: principal.user.id, name: principal.user.login },
          metadata: { authModule: LDAP_AUTH_MODULE, reason },
        });
        return message;
      };

      const lockout = lockoutKey(clientIp(ctx), { login: body.ldapLogin });
      const slot = await takeAttemptSlot(services.db, lockout, services.clock.now());
      if (!slot.granted) throw lockedOut(slot.retryAfterSeconds);
      const checked = await directory.authenticate(body.ldapLogin, body.ldapPassword);
      if (!checked.ok) throw new UnauthorizedError(await refuse('the directory refused this login or password', `ldap: ${checked.reason}`));
      await clearAttempts(services.db, lockout);

      const now = services.clock.now();
      try {
        await services.transact((tx) => linkDirectoryEntry(tx, services.config, actor, checked.match.entry, principal.user.id, now));
      } catch (err) {
        if (!(err instanceof ExternalLoginError)) throw err;
        throw new ConflictError(await refuse(err.message, err.reason));
      }
      ctx.status = 201;
      ctx.body = presentAuthLink((await findLinkOfUser(services.db, principal.user.id, LDAP_AUTH_MODULE))!);
    },
  });
};
