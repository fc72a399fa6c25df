/**
 * The client's address: the socket's peer, unless that peer is a configured trusted proxy
 * (TRUSTED_PROXIES: addresses or CIDRs); then the nearest X-Forwarded-For hop that is not itself a trusted proxy.
 * A client can put anything in X-Forwarded-For, so only hops added by our proxies are believed.
 * The same holds for the other forwarding headers (see fromTrustedProxy).
 */
import type { Context, Next } from 'koa';
import { normalizeIp } from '../config.ts';
import type { IpRanges } from '../net/ip-ranges.ts';

export function resolveClientIp(peer: string | undefined, forwardedFor: string, trusted: IpRanges): string | null {
  const socketIp = peer ? normalizeIp(peer) : null;
  if (!socketIp || !trusted.contains(socketIp)) return socketIp;
  const hops = forwardedFor
    .split(',')
    .map((hop) => normalizeIp(hop.trim()))
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!trusted.contains(hops[i]!)) return hops[i]!;
  }
  return hops[0] ?? socketIp;
}

/** `trusted`: the TRUSTED_PROXIES, built once in app.ts and shared with the request log. */
export function clientIpMiddleware(trusted: IpRanges) {
  return async function setClientIp(ctx: Context, next: Next): Promise<void> {
    const peer = ctx.req.socket.remoteAddress;
    ctx.state.clientIp = resolveClientIp(peer, ctx.get('x-forwarded-for'), trusted);
    ctx.state.fromTrustedProxy = !!peer && trusted.contains(peer);
    await next();
  };
}

/** The address resolved for this request (see clientIpMiddleware). */
export function clientIp(ctx: Context): string | null {
  return (ctx.state.clientIp as string | null | undefined) ?? null;
}

/** Whether the socket's peer is a trusted proxy, whose X-Forwarded-* headers may be believed. */
export function fromTrustedProxy(ctx: Context): boolean {
  return ctx.state.fromTrustedProxy === true;
}
