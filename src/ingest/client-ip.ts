import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';

/**
 * The client's IP address. Forwarding headers are believed only when `trustProxy` says a proxy we
 * run sets them (first hop of `X-Forwarded-For`, then `CF-Connecting-IP`, then `X-Real-IP`); on
 * Cloudflare Workers, where `request.cf` proves the edge set it, `CF-Connecting-IP` is always used.
 * Otherwise the socket's address (Node). Empty when nothing is known (in-process test requests).
 */
export function clientIp(c: Context, trustProxy: boolean): string {
  const onCloudflare = (c.req.raw as { cf?: unknown }).cf !== undefined;
  if (trustProxy || onCloudflare) {
    const cf = c.req.header('cf-connecting-ip');
    if (onCloudflare && cf) return cf.trim();
    const xff = c.req.header('x-forwarded-for');
    const first = xff?.split(',', 1)[0]?.trim();
    if (first) return first;
    const other = cf ?? c.req.header('x-real-ip');
    if (other) return other.trim();
  }
  try {
    const address = getConnInfo(c).remote.address ?? '';
    // IPv4 clients of a dual-stack socket appear as ::ffff:a.b.c.d.
    return address.startsWith('::ffff:') ? address.slice(7) : address;
  } catch {
    return '';
  }
}
