/**
 * Server administration of a user's second factors: a user who lost theirs (and their recovery
 * codes) is reset by a server admin, audited. The user signs in with the password alone next
 * time, and enrols again (at once, when MFA_REQUIRED_FOR names them).
 */
import { recordAudit } from '../audit/writer.ts';
import { actorOf } from '../http/actor.ts';
import type { RouteModule } from '../http/route.ts';
import { findTargetUser, globalUser, userIdParams } from './admin-users.target.ts';
import { deleteLoginChallengesOfUser, deleteRecoveryCodes, deleteTotp, deleteWebauthnCredentials } from './mfa.store.ts';
import { userTarget } from './session-revocation.ts';

export const adminUserMfaRoutes: RouteModule = (routes) => {
  routes.add({
    method: 'delete',
    path: '/api/admin/users/:userId/mfa',
    access: 'authenticated',
    level: 'server',
    summary: 'Removes every second factor of a user (TOTP, passkeys, recovery codes) and their pending sign-in challenges; server admins only.',
    responses: {
      200: {
        type: 'object',
        properties: { message: { type: 'string' }, totp: { type: 'boolean' }, passkeys: { type: 'integer' } },
        required: ['message', 'totp', 'passkeys'],
      },
    },
    params: userIdParams,
    async handler({ ctx, params, principal, services, authorize }) {
      await authorize('users.password:write', globalUser(params.userId));
      const user = await findTargetUser(services.db, params.userId);
      const now = services.clock.now();
      ctx.body = await services.transact(async (tx) => {
        const totp = await deleteTotp(tx.db, user.id);
        const passkeys = await deleteWebauthnCredentials(tx.db, user.id);
        await deleteRecoveryCodes(tx.db, user.id);
        await deleteLoginChallengesOfUser(tx.db, user.id);
        await recordAudit(tx.db, actorOf(ctx, principal), { action: 'user.mfa_reset', target: userTarget(user), metadata: { totp, passkeys } }, now);
        return { message: 'second factors removed', totp, passkeys };
      });
    },
  });
};
