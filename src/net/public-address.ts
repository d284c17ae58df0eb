import { createCidrMatcher, parseIp, type IpBytes } from '../ingest/enrich/cidr.js';

/**
 * Why an address is not on the public internet, or `public`. Outbound requests the service makes
 * on a tenant's behalf (webhooks) must only reach `public` addresses: anything else could be the
 * host itself, the cloud metadata service (169.254.169.254) or a neighbour on a private network.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'reserved'
  | 'invalid';

const block = (cls: Exclude<AddressClass, 'public' | 'invalid'>, cidrs: string[]) => ({ cls, match: createCidrMatcher(cidrs) });

/** IPv4 special-purpose blocks (IANA registry), most specific class first. */
const V4_BLOCKS = [
  block('unspecified', ['0.0.0.0/8']),
  block('loopback', ['127.0.0.0/8']),
  block('private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']),
  block('link-local', ['169.254.0.0/16']),
  block('cgnat', ['100.64.0.0/10']),
  block('multicast', ['224.0.0.0/4']),
  // IETF protocol assignments, documentation, 6to4 relay anycast, benchmarking, future use and broadcast.
  block('reserved', ['192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4']),
];

/** IPv6 blocks that are never public. IPv4-mapped addresses arrive already as IPv4 (parseIp). */
const V6_BLOCKS = [
  block('unspecified', ['::/128']),
  block('loopback', ['::1/128']),
  block('private', ['fc00::/7', 'fec0::/10']),
  block('link-local', ['fe80::/10']),
  block('multicast', ['ff00::/8']),
  // IPv4-compatible (deprecated), discard-only, local-use NAT64, benchmarking, ORCHID, documentation.
  block('reserved', ['::/96', '100::/64', '64:ff9b:1::/48', '2001:2::/48', '2001:10::/28', '2001:20::/28', '2001:db8::/32']),
];

/** Global unicast: an IPv6 address outside it (and outside the translation blocks) is not routable. */
const GLOBAL_UNICAST = createCidrMatcher(['2000::/3']);
const NAT64 = createCidrMatcher(['64:ff9b::/96']);
const SIX_TO_FOUR = createCidrMatcher(['2002::/16']);
const TEREDO = createCidrMatcher(['2001::/32']);

function classifyV4(b: IpBytes): AddressClass {
  for (const entry of V4_BLOCKS) if (entry.match.bytes(b)) return entry.cls;
  return 'public';
}

/** The worst of several classes: any non-public embedded address makes the whole one non-public. */
const worst = (...classes: AddressClass[]): AddressClass => classes.find((c) => c !== 'public') ?? 'public';

function classifyV6(b: IpBytes): AddressClass {
  // Translation and tunnel addresses carry an IPv4 address that the packet ends up at.
  if (NAT64.bytes(b)) return classifyV4(b.slice(12));
  if (SIX_TO_FOUR.bytes(b)) return classifyV4(b.slice(2, 6));
  if (TEREDO.bytes(b)) {
    // Teredo: the server's IPv4 in bits 32–63, the client's (inverted) in bits 96–127.
    return worst(classifyV4(b.slice(4, 8)), classifyV4(b.slice(12).map((x) => x ^ 0xff)));
  }
  for (const entry of V6_BLOCKS) if (entry.match.bytes(b)) return entry.cls;
  return GLOBAL_UNICAST.bytes(b) ? 'public' : 'reserved';
}

/**
 * Classifies an IP address given as text (IPv4 dotted quad, IPv6 with or without brackets;
 * IPv4-mapped IPv6 counts as the IPv4 address). Text that is not an address is `invalid`.
 */
export function classifyAddress(ip: string): AddressClass {
  const bytes = parseIp(ip);
  if (!bytes) return 'invalid';
  return bytes.length === 4 ? classifyV4(bytes) : classifyV6(bytes);
}

/** True only for addresses on the public internet. */
export const isPublicAddress = (ip: string): boolean => classifyAddress(ip) === 'public';

/** True when `host` (a URL hostname, brackets allowed) is an IP literal rather than a name. */
export const isIpLiteral = (host: string): boolean => parseIp(host) !== null;
