import { checkWebhookTarget, type WebhookTargetPolicy } from './webhook-target.js';

/** Header carrying `sha256=<hex HMAC-SHA256 of the raw body>` keyed with the schedule's secret. */
export const SIGNATURE_HEADER = 'X-Sightline-Signature';

const toHex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** `sha256=<hex>`: HMAC-SHA256 of `body` under `secret` (Web Crypto: same on Workers and Node). */
export async function signBody(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return `sha256=${toHex(await crypto.subtle.sign('HMAC', key, enc.encode(body)))}`;
}

/**
 * Sends one webhook request. `address` is the already checked IP to connect to (null: connect by
 * the URL's host); an implementation that resolves the host itself would let DNS rebinding
 * through, so the Node one (src/jobs/node-webhook-fetch.ts) connects to `address`. The global
 * fetch (Workers) ignores it: there the host is an IP literal or Cloudflare's egress applies.
 */
export type Fetch = (input: string, init: RequestInit, address?: string | null) => Promise<{ status: number; body?: ReadableStream | null }>;

export type WebhookResult = { status: number } | { error: string };

/**
 * POSTs a signed JSON notice. The target is checked again first (`policy`: the host may resolve
 * elsewhere than when the URL was accepted); a refused target is not contacted and comes back as
 * `{ error }`. Resolves with the receiver's status, or an error text when it could not be reached
 * in 10 s; never throws, since the export itself already succeeded.
 */
export async function deliverWebhook(
  url: string,
  secret: string,
  payload: unknown,
  opts: { policy: WebhookTargetPolicy; fetch?: Fetch },
): Promise<WebhookResult> {
  const target = await checkWebhookTarget(url, opts.policy);
  if (!target.ok) return { error: `refused: ${target.error}` };
  const send = opts.fetch ?? ((i, init) => fetch(i, init));
  const body = JSON.stringify(payload);
  try {
    const res = await send(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'Sightline-Webhook/1', [SIGNATURE_HEADER]: await signBody(secret, body) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      },
      target.address,
    );
    await res.body?.cancel();
    return { status: res.status };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
