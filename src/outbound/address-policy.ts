/**
 * Which addresses the service may connect to. Backends are configured by org admins, so a
 * connector URL must not reach what only the service can reach: cloud metadata and link-local
 * addresses, loopback, the unspecified and multicast ranges, and the service's own addresses.
 * CONNECTOR_ALLOWED_NETWORKS (CIDRs) opens ranges again, e.g. loopback for local development.
 * The check runs on the resolved address of every connection (client.ts), so a name that
 * resolves to an allowed address once and a refused one later (DNS rebinding) is still refused.
 */
import { canonicalIp, IpRanges } from '../net/ip-ranges.ts';

export const ALLOWED_NETWORKS_VARIABLE = 'CONNECTOR_ALLOWED_NETWORKS';

const REFUSED_RANGES: Array<{ cidr: string; why: string }> = [
  { cidr: '0.0.0.0/8', why: 'unspecified' },
  { cidr: '::/128', why: 'unspecified' },
  { cidr: '127.0.0.0/8', why: 'loopback' },
  { cidr: '::1/128', why: 'loopback' },
  { cidr: '169.254.0.0/16', why: 'link-local (cloud metadata)' },
  { cidr: 'fe80::/10', why: 'link-local' },
  { cidr: '224.0.0.0/4', why: 'multicast' },
  { cidr: '255.255.255.255/32', why: 'broadcast' },
  { cidr: 'ff00::/8', why: 'multicast' },
];

export class AddressPolicy {
  private readonly allowed: IpRanges;
  private readonly refused: Array<{ ranges: IpRanges; why: string }>;
  private readonly own: Set<string>;

  /** `ownAddresses`: where the service itself answers (its listen address, or every interface's). */
  constructor(allowedCidrs: string[], ownAddresses: string[]) {
    this.allowed = new IpRanges(allowedCidrs, ALLOWED_NETWORKS_VARIABLE);
    this.refused = REFUSED_RANGES.map(({ cidr, why }) => ({ ranges: new IpRanges([cidr], 'the refused ranges'), why }));
    this.own = new Set(ownAddresses.map((address) => canonicalIp(address)?.address).filter((address): address is string => !!address));
  }

  /** Why `address` (an IP) is refused, or null when the service may connect to it. */
  refusal(address: string): string | null {
    const ip = canonicalIp(address);
    if (!ip) return 'not an IP address';
    if (this.allowed.contains(ip.address)) return null;
    const range = this.refused.find(({ ranges }) => ranges.contains(ip.address));
    if (range) return range.why;
    if (this.own.has(ip.address)) return "the service's own address";
    return null;
  }
}

/** What a refused connection tells the caller: the address, why, and the variable that allows it. */
export function refusalMessage(host: string, address: string, why: string): string {
  const named = host === address ? address : `${host} (${address})`;
  return `connections to ${named} are refused: ${why}; set ${ALLOWED_NETWORKS_VARIABLE} to a CIDR that contains it to allow it`;
}
