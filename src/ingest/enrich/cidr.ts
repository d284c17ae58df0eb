/** An IP as bytes: 4 for IPv4 (IPv4-mapped IPv6 included), 16 for IPv6. */
export type IpBytes = Uint8Array;

/** Dotted quad, decimal, no leading zeros (octal ambiguity); a char loop because it is on the hot path. */
function parseV4(text: string): IpBytes | null {
  const out = new Uint8Array(4);
  let part = 0;
  let value = -1;
  let digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 46; // a virtual '.' closes the last part
    if (c === 46) {
      if (value < 0 || part > 3) return null;
      out[part++] = value;
      value = -1;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && value === 0) return null;
      value = (value < 0 ? 0 : value * 10) + (c - 48);
      if (++digits > 3 || value > 255) return null;
    } else return null;
  }
  return part === 4 ? out : null;
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/** Parses `a:b::c` groups (with an optional dotted IPv4 tail) into 16 bytes. */
function parseV6(text: string): IpBytes | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    const parts = s.split(':');
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i]!;
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseV4(p);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (HEX_GROUP.test(p)) out.push(parseInt(p, 16));
      else return null;
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const words = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

const isV4Mapped = (b: IpBytes): boolean =>
  b.length === 16 && b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/**
 * Parses an IPv4 or IPv6 address (zone ids dropped, brackets allowed). IPv4-mapped IPv6
 * (`::ffff:1.2.3.4`) comes back as the 4-byte IPv4 address so one rule covers both spellings.
 */
export function parseIp(ip: string): IpBytes | null {
  let text = ip.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  if (!text.includes(':')) return parseV4(text);
  const zone = text.indexOf('%');
  const v6 = parseV6(zone === -1 ? text : text.slice(0, zone));
  return v6 && isV4Mapped(v6) ? v6.slice(12) : v6;
}

/** A parsed CIDR block. */
export interface Cidr {
  bytes: IpBytes;
  prefix: number;
}

/** Parses `addr/prefix` (a bare address is a single-host block); throws on bad input. */
export function parseCidr(cidr: string): Cidr {
  const [addr, bits, extra] = cidr.split('/');
  const bytes = parseIp(addr ?? '');
  const max = bytes ? bytes.length * 8 : 0;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : -1;
  if (!bytes || extra !== undefined || prefix < 0 || prefix > max) throw new Error(`Invalid CIDR block: ${cidr}`);
  return { bytes, prefix };
}

/** Whether `ip` (already parsed) lies in `block`; IPv4 never matches an IPv6 block. */
export function inCidr(ip: IpBytes, block: Cidr): boolean {
  if (ip.length !== block.bytes.length) return false;
  const full = block.prefix >> 3;
  for (let i = 0; i < full; i++) if (ip[i] !== block.bytes[i]) return false;
  const rest = block.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (ip[full]! & mask) === (block.bytes[full]! & mask);
}

/** A predicate over IPs, by string or already parsed. */
export interface CidrMatcher {
  (ip: string): boolean;
  bytes(ip: IpBytes): boolean;
}

/** Compiles a list of CIDR blocks into a predicate over IPs (false for unparsable IPs). */
export function createCidrMatcher(cidrs: readonly string[]): CidrMatcher {
  const blocks = cidrs.map(parseCidr);
  const bytes = (ip: IpBytes) => blocks.some((b) => inCidr(ip, b));
  return Object.assign((ip: string) => {
    const parsed = parseIp(ip);
    return parsed !== null && bytes(parsed);
  }, { bytes });
}

/**
 * Addresses that never locate a visitor: private (RFC 1918, ULA), loopback, link-local,
 * carrier-grade NAT, unspecified, documentation and benchmarking ranges.
 */
export const isNonPublicIp: CidrMatcher = createCidrMatcher([
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12',
  '192.0.2.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '240.0.0.0/4',
  '::/128', '::1/128', 'fc00::/7', 'fe80::/10', '2001:db8::/32',
]);
