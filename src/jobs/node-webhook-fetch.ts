import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Fetch } from './webhook.js';

/** A lookup that answers every question with the one checked address. */
function pinnedLookup(address: string): LookupFunction {
  const family = address.includes(':') ? 6 : 4;
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as LookupFunction;
}

/**
 * Webhook requests on Node, connected to the address the SSRF check approved (`address`) instead
 * of resolving the host again: a name that answers a public address to the check and 127.0.0.1
 * to the connection (DNS rebinding) still reaches the public one. TLS keeps the URL's host name
 * for SNI and certificate checks. Redirects are not followed; the body of the answer is discarded.
 */
export const nodeWebhookFetch: Fetch = (url, init, address) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : null;
    if (!send) return reject(new Error(`unsupported protocol ${target.protocol}`));
    const req = send(
      target,
      {
        method: init.method ?? 'POST',
        headers: init.headers as Record<string, string>,
        signal: init.signal ?? undefined,
        // A fresh connection each time: a pooled keep-alive socket would skip the pinned lookup.
        agent: false,
        ...(address ? { lookup: pinnedLookup(address) } : {}),
      },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0 });
      },
    );
    req.on('error', reject);
    req.end(typeof init.body === 'string' ? init.body : undefined);
  });
