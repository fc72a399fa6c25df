/**
 * Sets of IP addresses and CIDR ranges (IPv4 and IPv6), read from the configuration: the outbound
 * address policy's networks (CONNECTOR_ALLOWED_NETWORKS and the refused ranges) and the trusted
 * proxies (TRUSTED_PROXIES) match addresses with this one implementation.
 */
import { BlockList, isIP } from 'node:net';

export type IpFamily = 'ipv4' | 'ipv6';

/**
 * An address as matched: `::ffff:10.0.0.1` (IPv4-mapped IPv6, as node reports IPv4 peers on
 * dual-stack sockets) is 10.0.0.1, so the mapping can neither smuggle a refused IPv4 address nor
 * hide a trusted one; `[::1]` is ::1. Null when it is no IP address.
 */
export function canonicalIp(address: string): { address: string; family: IpFamily } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const plain = mapped ? mapped[1]! : address.replace(/^\[|\]$/g, '');
  const version = isIP(plain);
  if (version === 0) return null;
  return { address: plain, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** What an entry of `variable` may be: CIDRs only, or single addresses too. */
export type EntryKind = 'cidr' | 'address-or-cidr';

export class IpRanges {
  private readonly list = new BlockList();
  /** No entry: nothing is contained, which a request's path learns without parsing an address. */
  readonly isEmpty: boolean;

  /** Throws an Error naming `variable` and the first malformed entry (config.ts makes it a ConfigError). */
  constructor(entries: readonly string[], variable: string, kind: EntryKind = 'cidr') {
    for (const entry of entries) this.add(entry, variable, kind);
    this.isEmpty = entries.length === 0;
  }

  private add(entry: string, variable: string, kind: EntryKind): void {
    const [network = '', bits, ...extra] = entry.split('/');
    const ip = canonicalIp(network);
    if (ip && bits === undefined && kind === 'address-or-cidr') {
      this.list.addAddress(ip.address, ip.family);
      return;
    }
    const max = ip?.family === 'ipv4' ? 32 : 128;
    if (!ip || bits === undefined || extra.length > 0 || !/^\d+$/.test(bits) || Number(bits) > max) {
      const expected = kind === 'cidr' ? 'a CIDR' : 'an IP address or a CIDR';
      throw new Error(`${variable}: "${entry}" is not ${expected} such as 10.0.0.0/8 or fd00::/8`);
    }
    this.list.addSubnet(ip.address, Number(bits), ip.family);
  }

  /** Whether `address` is in the set; false for anything that is not an IP address. */
  contains(address: string): boolean {
    if (this.isEmpty) return false;
    const ip = canonicalIp(address);
    return !!ip && this.list.check(ip.address, ip.family);
  }
}
