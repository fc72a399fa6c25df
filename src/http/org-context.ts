/**
 * Active-org resolution, in the spec's order: the `X-Svc-Org-Id` header, then `?orgId`, then
 * the user's default org. A named org the caller is not a member of (a server admin too) is
 * refused here, with the same answer whether or not the org exists: that hides which org ids
 * exist, and keeps made-up ids from loading policy documents. The policy still decides every
 * action inside the org. A caller that belongs to no org at all gets the spec's failure. A
 * service-account token is pinned to its account's org.
 */
import type { Context } from 'koa';
import type { Principal } from '../identity/principal.ts';
import type { Services } from '../services.ts';
import { ForbiddenError } from '../errors.ts';
import { findOrgIdsOfMember, isOrgMember } from '../orgs/store.ts';

export const ORG_HEADER = 'x-svc-org-id';

export async function resolveActiveOrg(ctx: Context, services: Services, principal: Principal): Promise<string> {
  const named = ctx.get(ORG_HEADER).trim() || (typeof ctx.query.orgId === 'string' ? ctx.query.orgId.trim() : '');
  if (principal.pinnedOrgId) {
    // A service-account token belongs to one org; naming another is refused, not followed.
    if (named && named !== principal.pinnedOrgId) throw new ForbiddenError(`this token can only act in org ${principal.pinnedOrgId}`);
    return principal.pinnedOrgId;
  }
  if (named) {
    if (!(await isOrgMember(services.db, named, principal.user.id))) throw new ForbiddenError(`user is not a member of org ${named}`);
    return named;
  }
  const memberships = await findOrgIdsOfMember(services.db, principal.user.id);
  if (memberships.length === 0) throw new ForbiddenError('user is not a member of any org');
  return memberships.find((orgId) => orgId === principal.user.defaultOrgId) ?? memberships[0]!;
}
