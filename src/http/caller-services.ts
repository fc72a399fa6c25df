/**
 * What the HTTP layer asks of the domains about a request's caller. The HTTP layer declares it
 * and app.ts wires it with the identity, orgs and audit implementations, so that no import runs
 * from the HTTP layer up into a domain.
 */
import type { Context } from 'koa';
import type { Actor, AuditEvent } from '../audit/writer.ts';
import type { Principal } from '../principal.ts';

export interface CallerServices {
  /** The principal of a session cookie's value, or null when the cookie is forged, expired or revoked. */
  sessionPrincipal(ctx: Context, cookieValue: string): Promise<Principal | null>;
  /** The ids of the orgs the user belongs to. */
  orgIdsOfMember(userId: string): Promise<readonly string[]>;
  /** Audits a refused change, in a transaction of its own. */
  recordRefusal(actor: Actor, event: Omit<AuditEvent, 'outcome'>): Promise<void>;
}
