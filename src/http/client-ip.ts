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
  return nearestUntrustedHop(socketIp, forwardedFor, trusted);
}

/** The client behind a trusted proxy at `socketIp`: the nearest X-Forwarded-For hop that is not a trusted proxy too. */
function nearestUntrustedHop(socketIp: string, forwardedFor: string, trusted: IpRanges): string {
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
  return function setClientIp(ctx: Context, next: Next): Promise<void> {
    const peer = ctx.req.socket.remoteAddress;
    const socketIp = peer ? normalizeIp(peer) : null;
    // contains() reads ::ffff:10.0.0.1 as 10.0.0.1: the normalized address is trusted exactly when the peer is
    const fromProxy = !!socketIp && trusted.contains(socketIp);
    ctx.state.clientIp = fromProxy ? nearestUntrustedHop(socketIp, ctx.get('x-forwarded-for'), trusted) : socketIp;
    ctx.state.fromTrustedProxy = fromProxy;
    return next();
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
