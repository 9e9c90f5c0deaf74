import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { parseHttpUrl } from './url.js';

const v4 = (cidr: string) => ipaddr.IPv4.parseCIDR(cidr);
const v6 = (cidr: string) => ipaddr.IPv6.parseCIDR(cidr);

/**
 * IPv4 blocks that are not global unicast: every entry of the IANA IPv4 Special-Purpose Address
 * Registry not marked globally reachable, plus multicast (224/4), which is not unicast.
 */
const IPV4_NOT_GLOBAL = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // shared address space (CGNAT)
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, cloud metadata
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments (DS-Lite, dummy, NAT64 discovery ...)
  '192.0.2.0/24', // TEST-NET-1
  '192.88.99.0/24', // 6to4 relay anycast, deprecated
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, and 255.255.255.255 (limited broadcast) in it
].map(v4);

/** Addresses inside the blocks above that the IPv4 registry marks globally reachable. */
const IPV4_GLOBAL_EXCEPTIONS = [
  '192.0.0.9/32', // Port Control Protocol anycast
  '192.0.0.10/32', // TURN anycast
].map(v4);

/** IPv6 global unicast space (RFC 4291): anything outside is not a merchant's server. */
const IPV6_GLOBAL_UNICAST = v6('2000::/3');

/**
 * IPv6 blocks of the IANA IPv6 Special-Purpose Address Registry not marked globally reachable.
 * Those outside 2000::/3 are refused by that rule anyway and are listed for completeness.
 */
const IPV6_NOT_GLOBAL = [
  '::/128', // unspecified
  '::1/128', // loopback
  '64:ff9b:1::/48', // local-use IPv4/IPv6 translation
  '100::/64', // discard-only
  '100:0:0:1::/64', // dummy prefix
  '2001::/23', // IETF protocol assignments
  '2001:2::/48', // benchmarking
  '2001:db8::/32', // documentation
  '2001:10::/28', // ORCHID, deprecated
  '3fff::/20', // documentation
  '5f00::/16', // SRv6 SIDs
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // site-local, deprecated
  'ff00::/8', // multicast
].map(v6);

/** Blocks inside 2001::/23 that the IPv6 registry marks globally reachable. */
const IPV6_GLOBAL_EXCEPTIONS = [
  '2001:1::1/128', // Port Control Protocol anycast
  '2001:1::2/128', // TURN anycast
  '2001:1::3/128', // DNS-SD service registration protocol anycast
  '2001:3::/32', // AMT
  '2001:4:112::/48', // AS112-v6
  '2001:20::/28', // ORCHIDv2
  '2001:30::/28', // drone remote ID protocol entity tags
].map(v6);

const octetsAt = (bytes: number[], start: number) => new ipaddr.IPv4(bytes.slice(start, start + 4));

/**
 * IPv6 forms that carry an IPv4 address, and where it sits. An address of such a form is
 * judged by the IPv4 address(es) it carries, since that is where the packets end up.
 */
const EMBEDDINGS: { readonly prefix: [ipaddr.IPv6, number]; readonly carried: (bytes: number[]) => ipaddr.IPv4[] }[] = [
  // IPv4-mapped (RFC 4291), IPv4-translated (RFC 2765), IPv4-compatible (deprecated; this
  // also covers :: and ::1, carrying 0.0.0.0 and 0.0.0.1) and NAT64 well-known (RFC 6052).
  { prefix: v6('::ffff:0:0/96'), carried: (b) => [octetsAt(b, 12)] },
  { prefix: v6('::ffff:0:0:0/96'), carried: (b) => [octetsAt(b, 12)] },
  { prefix: v6('::/96'), carried: (b) => [octetsAt(b, 12)] },
  { prefix: v6('64:ff9b::/96'), carried: (b) => [octetsAt(b, 12)] },
  // 6to4 (RFC 3056): the site's IPv4 address follows 2002:.
  { prefix: v6('2002::/16'), carried: (b) => [octetsAt(b, 2)] },
  // Teredo (RFC 4380): the server's IPv4 address, then the client's, bits inverted, last.
  {
    prefix: v6('2001::/32'),
    carried: (b) => [octetsAt(b, 4), new ipaddr.IPv4(b.slice(12, 16).map((octet) => octet ^ 0xff))],
  },
];

/** ISATAP interface identifiers (RFC 5214): [0|2]00:5efe followed by an IPv4 address. */
function isatapCarried(bytes: number[]): ipaddr.IPv4 | undefined {
  const [b8, b9, b10, b11] = bytes.slice(8, 12);
  return (b8 === 0x00 || b8 === 0x02) && b9 === 0x00 && b10 === 0x5e && b11 === 0xfe ? octetsAt(bytes, 12) : undefined;
}

function isGlobalIpv4(address: ipaddr.IPv4): boolean {
  if (IPV4_GLOBAL_EXCEPTIONS.some((cidr) => address.match(cidr))) return true;
  return !IPV4_NOT_GLOBAL.some((cidr) => address.match(cidr));
}

function isGlobalIpv6(address: ipaddr.IPv6): boolean {
  const bytes = address.toByteArray();
  // An ISATAP router delivers to the carried IPv4 address inside its site: both must be global.
  const isatap = isatapCarried(bytes);
  if (isatap && !isGlobalIpv4(isatap)) return false;
  const embedding = EMBEDDINGS.find((form) => address.match(form.prefix));
  if (embedding) return embedding.carried(bytes).every(isGlobalIpv4);
  if (!address.match(IPV6_GLOBAL_UNICAST)) return false;
  if (IPV6_GLOBAL_EXCEPTIONS.some((cidr) => address.match(cidr))) return true;
  return !IPV6_NOT_GLOBAL.some((cidr) => address.match(cidr));
}

/**
 * Whether an address is global unicast, the only kind a webhook may go to (an allow-list):
 * not in any block the IANA special-purpose registries mark as not globally reachable, not
 * multicast, IPv6 only within 2000::/3, and an IPv6 form that carries an IPv4 address (mapped,
 * compatible, translated, NAT64, 6to4, Teredo, ISATAP) judged by that IPv4 address. Only
 * addresses in the plain forms DNS answers use are accepted (no octal, short or zoned forms).
 */
export function isGlobalUnicast(address: string): boolean {
  switch (isIP(address)) {
    case 4:
      return isGlobalIpv4(ipaddr.IPv4.parse(address));
    case 6:
      return isGlobalIpv6(ipaddr.IPv6.parse(address));
    default:
      return false;
  }
}

/** The address literal a parsed URL's host is, if it is one (IPv6 without its brackets). */
function hostAddress(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : undefined;
}

/**
 * Why a webhook URL is refused by its host alone, when the platform does not allow private
 * destinations: an address literal that is not global unicast, or localhost (RFC 6761: always
 * loopback). Any other name is judged by what it resolves to when a webhook is sent.
 */
export function refusedHost(url: URL): string | undefined {
  const address = hostAddress(url);
  if (address !== undefined) return isGlobalUnicast(address) ? undefined : 'must not point to a non-public address';
  const name = url.hostname.replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'must not point to localhost';
  return undefined;
}

/** Resolves a host name to its addresses (injectable for tests). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** How long a DNS answer is reused for deliveries to the same host. */
export const DNS_CACHE_MS = 5_000;
const DNS_CACHE_HOSTS = 1_024;

/**
 * A resolver that reuses each host's answer for `ttlMs` (one lookup for a burst of deliveries to
 * one merchant, instead of one per attempt), with one lookup in flight per host; failures are not
 * kept. Only the answer is cached, never a verdict: the guard still checks every address of it on
 * every attempt and pins the connection to a checked one, so a name rebound to a private address
 * is refused as soon as its cached answer runs out, and nothing ever connects to an address the
 * guard has not approved.
 */
export function cachingResolver(
  resolve: Resolver,
  now: () => number,
  ttlMs = DNS_CACHE_MS,
  maxHosts = DNS_CACHE_HOSTS,
): Resolver {
  const answers = new Map<string, { answer: ReturnType<Resolver>; expires: number }>();
  return (hostname) => {
    const at = now();
    const cached = answers.get(hostname);
    if (cached && at < cached.expires) return cached.answer;
    answers.delete(hostname);
    const answer = resolve(hostname);
    answers.set(hostname, { answer, expires: at + ttlMs });
    answer.catch(() => {
      if (answers.get(hostname)?.answer === answer) answers.delete(hostname);
    });
    // Oldest entry out (Map keeps insertion order; a refreshed host is inserted anew).
    if (answers.size > maxHosts) answers.delete(answers.keys().next().value as string);
    return answer;
  };
}

/** Where a webhook may be sent: the URL's parts and the one address the connection is pinned to. */
export interface Destination {
  readonly url: URL;
  readonly address: string;
  readonly family: 4 | 6;
}

/** A webhook URL the guard refuses; the reason is recorded on the attempt. */
export class DestinationRefused extends Error {}

/**
 * The SSRF guard at connect time. The URL must pass the URL rule (https only when
 * `httpsOnly`); the host is resolved once, every address it resolves to must be global unicast
 * unless `allowPrivate`, and the connection is then pinned to the checked address, so that a
 * second, different DNS answer cannot redirect it.
 */
export async function resolveDestination(
  webhookUrl: string,
  policy: { allowPrivate: boolean; httpsOnly: boolean; resolve?: Resolver },
): Promise<Destination> {
  const parsed = parseHttpUrl(webhookUrl, { httpsOnly: policy.httpsOnly });
  if (!parsed.ok) throw new DestinationRefused(`the URL ${parsed.reason}`);
  const { url } = parsed;
  const refusedByHost = policy.allowPrivate ? undefined : refusedHost(url);
  if (refusedByHost) throw new DestinationRefused(`the URL ${refusedByHost}`);
  const literal = hostAddress(url);
  const host = literal ?? url.hostname;
  let addresses: { address: string; family: number }[];
  if (literal !== undefined) {
    addresses = [{ address: literal, family: isIP(literal) }];
  } else {
    try {
      addresses = await (policy.resolve ?? systemResolver)(host);
    } catch {
      throw new DestinationRefused(`cannot resolve ${host}`);
    }
  }
  if (addresses.length === 0) throw new DestinationRefused(`${host} has no address`);
  if (!policy.allowPrivate) {
    const refused = addresses.find((a) => !isGlobalUnicast(a.address));
    if (refused) throw new DestinationRefused(`${host} resolves to a non-public address`);
  }
  const chosen = addresses[0] as { address: string; family: number };
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
