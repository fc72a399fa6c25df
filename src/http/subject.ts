import type { Subject } from '../authz/types.ts';
import type { Principal } from '../principal.ts';

/** The policy's view of the caller, fresh from authentication on every request. */
export function subjectOf(principal: Principal | undefined): Subject {
  if (!principal) return { id: '', kind: 'anonymous', server_admin: false, disabled: false };
  return {
    id: principal.user.id,
    kind: principal.user.isServiceAccount ? 'service_account' : 'user',
    server_admin: principal.user.isSvcAdmin,
    disabled: principal.user.isDisabled,
  };
}

/** A user's own record as a policy resource: the target of the self actions under /api/user. */
export const ownRecord = (principal: Principal) => ({ kind: 'users', id: principal.user.id });
