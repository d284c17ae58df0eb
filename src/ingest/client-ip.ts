import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { IPV4_REGEX, IPV6_REGEX } from 'valibot';

/** What a request tells about its client, whatever serves it (Hono or the Node event fast path). */
export interface ClientFacts {
  header(name: string): string | undefined;
  /** Whether Cloudflare's edge answered (`request.cf` is present): its headers are then trusted. */
  onCloudflare: boolean;
  /** The socket's peer address; '' when there is no socket (in-process test requests). */
  peerAddress(): string;
}

const V4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const V6_IN_BRACKETS = /^\[([^\]]+)\](?::\d{1,5})?$/;
const V4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/;

/**
 * The IP address a header or socket names, or null when it names none. Some load balancers
 * write a port (`203.0.113.7:51234`, `[2001:db8::1]:443`): it is dropped. IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`, how a dual-stack socket shows IPv4 clients) becomes the IPv4 address and
 * IPv6 is lowercased, so one client has one spelling. Zone ids (`fe80::1%eth0`) are refused.
 */
export function parseIp(text: string): string | null {
  let s = text.trim();
  if (s.length === 0 || s.length > 64) return null;
  const bracketed = V6_IN_BRACKETS.exec(s);
  if (bracketed) s = bracketed[1]!;
  else s = V4_WITH_PORT.exec(s)?.[1] ?? s;
  if (!bracketed && IPV4_REGEX.test(s)) return s;
  if (s.includes('%') || !IPV6_REGEX.test(s)) return null;
  s = s.toLowerCase();
  const mapped = V4_MAPPED.exec(s)?.[1];
  return mapped && IPV4_REGEX.test(mapped) ? mapped : s;
}

/**
 * The client of an `X-Forwarded-For` list behind `hops` trusted proxies: each proxy appends the
 * address it received the request from, so only the `hops` rightmost entries are written by
 * proxies we run; everything left of them is what the client sent, and may be forged. The client
 * is the `hops`-th entry from the right (the leftmost when the list is shorter: then every entry
 * is a proxy's). Null when that entry is not an IP address; undefined when there is no list.
 */
export function forwardedClient(header: string | undefined, hops: number): string | null | undefined {
  if (!header) return undefined;
  // A proxy always writes an address; an empty entry can only be the client's own text.
  const entries = header.split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length === 0) return undefined;
  return parseIp(entries[Math.max(0, entries.length - hops)]!);
}

/**
 * The client's IP address, always a valid IP or ''. `trustedHops` is TRUST_PROXY: the number of
 * proxies we run in front of the service. With 0 the socket's address is the client. With n ≥ 1
 * the client is the n-th `X-Forwarded-For` entry from the right (see forwardedClient); without
 * that header, the `CF-Connecting-IP` or `X-Real-IP` the nearest proxy set. On Cloudflare Workers,
 * where `request.cf` proves the edge set it, `CF-Connecting-IP` is always used (then, should it
 * be missing, the edge's own `X-Forwarded-For` entry, the rightmost). A chosen value that is not
 * an IP address is not believed: the socket's address is used instead.
 */
export function clientAddress(facts: ClientFacts, trustedHops: number): string {
  if (facts.onCloudflare) {
    const edge = parseIp(facts.header('cf-connecting-ip') ?? '');
    if (edge) return edge;
  }
  const hops = facts.onCloudflare ? Math.max(1, trustedHops) : trustedHops;
  if (hops > 0) {
    const forwarded = forwardedClient(facts.header('x-forwarded-for'), hops);
    if (forwarded) return forwarded;
    if (forwarded === undefined) {
      const single = facts.header('cf-connecting-ip') ?? facts.header('x-real-ip');
      const ip = single === undefined ? null : parseIp(single);
      if (ip) return ip;
    }
  }
  return parseIp(facts.peerAddress()) ?? '';
}

/** The client facts of a Hono request. */
export function honoClientFacts(c: Context): ClientFacts {
  return {
    header: (name) => c.req.header(name),
    onCloudflare: (c.req.raw as { cf?: unknown }).cf !== undefined,
    peerAddress: () => {
      try {
        return getConnInfo(c).remote.address ?? '';
      } catch {
        return '';
      }
    },
  };
}

/** The client's IP address of a Hono request (see clientAddress). */
export function clientIp(c: Context, trustedHops: number): string {
  return clientAddress(honoClientFacts(c), trustedHops);
}
