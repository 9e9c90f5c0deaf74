import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Cloud metadata endpoints, refused by name as well as by range. */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

/**
 * IPv4 special-purpose blocks (RFC 6890) that ipaddr.js calls unicast: protocol assignments,
 * documentation, benchmarking and the former class E. None is a merchant's server.
 */
const SPECIAL_IPV4 = [
  '192.0.0.0/24',
  '192.0.2.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '240.0.0.0/4',
].map((cidr) => ipaddr.IPv4.parseCIDR(cidr));

/**
 * Whether an address is a public unicast address. Loopback, private, link-local, CGNAT,
 * multicast, unspecified, broadcast, reserved, documentation, benchmarking, unique-local and
 * cloud metadata addresses are not; an IPv4-mapped IPv6 address is judged by the IPv4 address
 * it maps.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (METADATA.has(parsed.toString())) return false;
  if (parsed.kind() === 'ipv4' && SPECIAL_IPV4.some((cidr) => (parsed as ipaddr.IPv4).match(cidr))) return false;
  // For IPv6 this also refuses the forms that embed an IPv4 address (6to4, Teredo, NAT64).
  return parsed.range() === 'unicast';
}

/** Resolves a host name to its addresses (injectable for tests). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Where a webhook may be sent: the URL's parts and the one address the connection is pinned to. */
export interface Destination {
  readonly url: URL;
  readonly address: string;
  readonly family: 4 | 6;
}

/** A webhook URL the guard refuses; the reason is recorded on the attempt. */
export class DestinationRefused extends Error {}

/**
 * The SSRF guard. The scheme must be http(s) (https only when `httpsOnly`); the host is resolved
 * once, every address it resolves to must be public unless `allowPrivate`, and the connection is
 * then pinned to the checked address, so that a second, different DNS answer cannot redirect it.
 */
export async function resolveDestination(
  webhookUrl: string,
  policy: { allowPrivate: boolean; httpsOnly: boolean; resolve?: Resolver },
): Promise<Destination> {
  let url: URL;
  try {
    url = new URL(webhookUrl);
  } catch {
    throw new DestinationRefused('not a URL');
  }
  const schemes = policy.httpsOnly ? ['https:'] : ['https:', 'http:'];
  if (!schemes.includes(url.protocol)) throw new DestinationRefused(`scheme ${url.protocol} is not allowed`);
  if (url.username || url.password) throw new DestinationRefused('credentials in the URL are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(host);
    } catch {
      throw new DestinationRefused(`cannot resolve ${host}`);
    }
  }
  if (addresses.length === 0) throw new DestinationRefused(`${host} has no address`);
  if (!policy.allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) throw new DestinationRefused(`${host} resolves to a non-public address`);
  }
  const chosen = addresses[0] as { address: string; family: number };
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
