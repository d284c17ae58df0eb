/** Header carrying `sha256=<hex HMAC-SHA256 of the raw body>` keyed with the schedule's secret. */
export const SIGNATURE_HEADER = 'X-Sightline-Signature';

const toHex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** `sha256=<hex>`: HMAC-SHA256 of `body` under `secret` (Web Crypto: same on Workers and Node). */
export async function signBody(secret: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', enc.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return `sha256=${toHex(await crypto.subtle.sign('HMAC', key, enc.encode(body)))}`;
}

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/**
 * POSTs a signed JSON notice. Resolves with the receiver's status, or an error text when it
 * could not be reached in 10 s; never throws, since the export itself already succeeded.
 */
export async function deliverWebhook(
  url: string,
  secret: string,
  payload: unknown,
  fetchImpl: Fetch = (i, init) => fetch(i, init),
): Promise<{ status: number } | { error: string }> {
  const body = JSON.stringify(payload);
  try {
    const res = await fetchImpl(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'Sightline-Webhook/1', [SIGNATURE_HEADER]: await signBody(secret, body) },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    return { status: res.status };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
