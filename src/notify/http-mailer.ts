import { MailError, type Mailer } from './mailer.js';

/**
 * Delivery through a JSON email API (the Workers path; Cloudflare's `send_email` binding only
 * reaches verified addresses, so it cannot send reports to arbitrary recipients). The request is
 * Resend's shape — `POST {url}` with `Authorization: Bearer {key}` and
 * `{from, to: [..], subject, text, html, headers}` — which Resend takes as is and which a small
 * relay can map to any other provider. 2xx is sent; 429 and 5xx may pass later; other 4xx are final.
 */
export function httpMailer(opts: { url: string; apiKey?: string; from: string; fetch?: typeof fetch }): Mailer {
  const doFetch = opts.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  return {
    async send(message) {
      let res: Response;
      try {
        res = await doFetch(opts.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(opts.apiKey ? { Authorization: `Bearer ${opts.apiKey}` } : {}) },
          body: JSON.stringify({ from: opts.from, to: [message.to], subject: message.subject, text: message.text, html: message.html, headers: message.headers ?? {} }),
          signal: AbortSignal.timeout(15_000),
        });
      } catch (err) {
        throw new MailError(`email API unreachable: ${(err as Error).message}`, false);
      }
      if (res.ok) {
        await res.body?.cancel();
        return;
      }
      const detail = (await res.text().catch(() => '')).slice(0, 300);
      throw new MailError(`email API answered ${res.status}${detail ? `: ${detail}` : ''}`, res.status !== 429 && res.status < 500);
    },
  };
}
