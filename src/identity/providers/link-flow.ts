/**
 * What the explicit link flows of every provider share: a signed-in user asks to link another
 * login (`POST /api/user/auth-links/<provider>`, after proving again who they are), the browser
 * goes through the provider, and the identity it brings back joins that user only when the same
 * browser session returns with it. A refusal is audited and sends the browser back to the page
 * it came from with `?linkError=<message>`.
 */
import type { Context } from 'koa';
import { recordFailure, type Actor } from '../../audit/writer.ts';
import { safeRedirect } from '../../http/redirect.ts';
import type { Services } from '../../services.ts';
import type { Principal } from '../../principal.ts';
import { ExternalLoginError } from './types.ts';

/** The account's password (when it has one) and the local page the browser returns to. */
export const LINK_START_BODY = {
  type: 'object',
  properties: { password: { type: 'string', minLength: 1, maxLength: 1024 }, redirect: { type: 'string', maxLength: 2048 } },
  additionalProperties: false,
} as const;

/** Where the browser goes to sign in at the provider. */
export const LINK_START_SCHEMA = {
  type: 'object',
  properties: { redirectUrl: { type: 'string' } },
  required: ['redirectUrl'],
  additionalProperties: false,
} as const;

export const LINKING_SESSION_GONE = new ExternalLoginError(
  'you are no longer signed in as the account that started the link: sign in and start again',
  'the session that started the link did not come back',
);

/** The caller, when it is the browser session that started the link (of the user it names, if it does). */
export function linkingPrincipal(ctx: Context, started: { sessionId: string | null | undefined; userId?: string }): Principal | undefined {
  const principal = ctx.state.principal as Principal | undefined;
  if (principal?.via !== 'session' || !started.sessionId || principal.sessionId !== started.sessionId) return undefined;
  return started.userId === undefined || principal.user.id === started.userId ? principal : undefined;
}

/** Audits a refused link (`user.auth_link_added`, failure, with the reason) and sends the browser back to its page. */
export async function refuseLink(
  ctx: Context,
  services: Services,
  actor: Actor,
  authModule: string,
  redirect: string,
  refusal: { message: string; reason: string },
): Promise<void> {
  await recordFailure(services, actor, {
    action: 'user.auth_link_added',
    target: actor.id ? { type: 'user', id: actor.id, name: actor.name } : undefined,
    metadata: { authModule, reason: refusal.reason.slice(0, 300) },
  });
  const target = new URL(safeRedirect(redirect), 'http://service');
  target.searchParams.set('linkError', refusal.message);
  ctx.redirect(`${target.pathname}${target.search}`);
}
