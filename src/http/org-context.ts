/**
 * Active-org resolution, in the spec's order: the `X-Svc-Org-Id` header, then `?orgId`, then a
 * service-account token's own org, then the user's default org. This gathers the facts (which
 * org, whether the caller is a member of it, the org a token is pinned to) and the policy decides
 * (authz/active_org): a token acts only in the org it is pinned to, a user only in an org it
 * belongs to (a server admin too), and a caller that belongs to no org gets the spec's failure.
 * The answer is the same whether or not a named org exists, which hides which org ids exist; and
 * the policy evaluates it without any org's document, so a made-up org id loads none. What the
 * caller may do inside the org is the route's authorize().
 */
import type { Context } from 'koa';
import type { ActiveOrgInput } from '../authz/types.ts';
import type { Principal } from '../principal.ts';
import type { Services } from '../services.ts';
import { ForbiddenError } from '../errors.ts';
import type { CallerServices } from './caller-services.ts';
import { subjectOf } from './subject.ts';

export const ORG_HEADER = 'x-svc-org-id';

export async function resolveActiveOrg(
  ctx: Context,
  services: Pick<Services, 'engine' | 'logger'>,
  callers: Pick<CallerServices, 'orgIdsOfMember'>,
  principal: Principal,
): Promise<string> {
  const memberships = await callers.orgIdsOfMember(principal.user.id);
  const input = activeOrgFacts(ctx, principal, memberships);
  const decision = await services.engine.activeOrg(input);
  if (!decision.allow || input.org_id === null) {
    services.logger.debug({ orgId: input.org_id, reasons: decision.reasons }, 'active org refused');
    throw new ForbiddenError(decision.message);
  }
  return input.org_id;
}

function activeOrgFacts(ctx: Context, principal: Principal, memberships: readonly string[]): ActiveOrgInput {
  const { id, kind, server_admin, disabled } = subjectOf(principal);
  // Written out, not spread: a property added after a spread takes V8's slow path, and so does the JSON of the object.
  const subject = { id, kind, server_admin, disabled, pinned_org: principal.pinnedOrgId };
  const named = ctx.get(ORG_HEADER).trim() || (typeof ctx.query.orgId === 'string' ? ctx.query.orgId.trim() : '');
  const asked = named || principal.pinnedOrgId;
  if (asked) return { subject, org_id: asked, org: { is_member: memberships.includes(asked) } };
  const orgId = memberships.find((id) => id === principal.user.defaultOrgId) ?? memberships[0] ?? null;
  return { subject, org_id: orgId, org: { is_member: orgId !== null } };
}
