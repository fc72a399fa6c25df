/** Who a request acts as, for the audit log: the audit writer receives this plain value, never the request. */
import type { Context } from 'koa';
import type { Actor } from '../audit/writer.ts';
import type { Principal } from '../principal.ts';
import { clientIp } from './client-ip.ts';

/** The actor of a request: its principal (or anonymous), with the client's IP and user agent. */
export function actorOf(ctx: Context, principal?: Principal | null): Actor {
  const user = principal?.user;
  return {
    type: user ? (user.isServiceAccount ? 'service_account' : 'user') : 'system',
    id: user?.id ?? null,
    name: user?.login ?? null,
    ip: clientIp(ctx),
    userAgent: ctx.get('user-agent').slice(0, 300) || null,
  };
}
