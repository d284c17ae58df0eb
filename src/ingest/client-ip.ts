import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';

/** What a request tells about its client, whatever serves it (Hono or the Node event fast path). */
export interface ClientFacts {
  header(name: string): string | undefined;
  /** Whether Cloudflare's edge answered (`request.cf` is present): its headers are then trusted. */
  onCloudflare: boolean;
  /** The socket's peer address; '' when there is no socket (in-process test requests). */
  peerAddress(): string;
}

/**
 * The client's IP address. Forwarding headers are believed only when `trustProxy` says a proxy we
 * run sets them (first hop of `X-Forwarded-For`, then `CF-Connecting-IP`, then `X-Real-IP`); on
 * Cloudflare Workers, where `request.cf` proves the edge set it, `CF-Connecting-IP` is always used.
 * Otherwise the socket's address (Node). Empty when nothing is known.
 */
export function clientAddress(facts: ClientFacts, trustProxy: boolean): string {
  if (trustProxy || facts.onCloudflare) {
    const cf = facts.header('cf-connecting-ip');
    if (facts.onCloudflare && cf) return cf.trim();
    const xff = facts.header('x-forwarded-for');
    const first = xff?.split(',', 1)[0]?.trim();
    if (first) return first;
    const other = cf ?? facts.header('x-real-ip');
    if (other) return other.trim();
  }
  const address = facts.peerAddress();
  // IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d.
  return address.startsWith('::ffff:') ? address.slice(7) : address;
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
export function clientIp(c: Context, trustProxy: boolean): string {
  return clientAddress(honoClientFacts(c), trustProxy);
}
