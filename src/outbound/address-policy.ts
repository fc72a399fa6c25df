/**
 * Which addresses the service may connect to. Backends are configured by org admins, so a
 * connector URL must not reach what only the service can reach: cloud metadata and link-local
 * addresses, loopback, the unspecified and multicast ranges, and the service's own addresses.
 * CONNECTOR_ALLOWED_NETWORKS (CIDRs) opens ranges again, e.g. loopback for local development.
 * The check runs on the resolved address of every connection (client.ts), so a name that
 * resolves to an allowed address once and a refused one later (DNS rebinding) is still refused.
 */
import { BlockList, isIP } from 'node:net';

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

export type IpFamily = 'ipv4' | 'ipv6';

/** `::ffff:10.0.0.1` (IPv4-mapped IPv6) is checked as 10.0.0.1, so the mapping cannot smuggle a refused IPv4 address. */
function canonical(address: string): { address: string; family: IpFamily } | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const plain = mapped ? mapped[1]! : address.replace(/^\[|\]$/g, '');
  const version = isIP(plain);
  if (version === 0) return null;
  return { address: plain, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function addCidr(list: BlockList, cidr: string): void {
  const [network = '', bits] = cidr.split('/');
  const ip = canonical(network);
  const prefix = Number(bits);
  const max = ip?.family === 'ipv4' ? 32 : 128;
  if (!ip || bits === undefined || !/^\d+$/.test(bits) || prefix > max)
    throw new Error(`${ALLOWED_NETWORKS_VARIABLE}: "${cidr}" is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
  list.addSubnet(ip.address, prefix, ip.family);
}

/** Throws on a malformed CIDR; config.ts turns that into a configuration error naming the variable. */
export function parseCidrs(cidrs: string[]): void {
  addAll(new BlockList(), cidrs);
}

function addAll(list: BlockList, cidrs: string[]): BlockList {
  for (const cidr of cidrs) addCidr(list, cidr);
  return list;
}

export class AddressPolicy {
  private readonly allowed: BlockList;
  private readonly refused: Array<{ list: BlockList; why: string }>;
  private readonly own: Set<string>;

  /** `ownAddresses`: where the service itself answers (its listen address, or every interface's). */
  constructor(allowedCidrs: string[], ownAddresses: string[]) {
    this.allowed = addAll(new BlockList(), allowedCidrs);
    this.refused = REFUSED_RANGES.map(({ cidr, why }) => ({ list: addAll(new BlockList(), [cidr]), why }));
    this.own = new Set(ownAddresses.map((address) => canonical(address)?.address).filter((address): address is string => !!address));
  }

  /** Why `address` (an IP) is refused, or null when the service may connect to it. */
  refusal(address: string): string | null {
    const ip = canonical(address);
    if (!ip) return 'not an IP address';
    if (this.allowed.check(ip.address, ip.family)) return null;
    const range = this.refused.find(({ list }) => list.check(ip.address, ip.family));
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
