import type { AuthorizeParamsT } from './schemas.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escapes text for element content and quoted attribute values. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ESCAPES[ch]);

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem;color:#222}' +
  'h1{font-size:1.3rem}label{display:block;margin:.6rem 0}input[type=email],input[type=password]{width:100%;padding:.4rem}' +
  'button{padding:.5rem 1.2rem;margin-right:.5rem}.error{color:#b00}.muted{color:#666;font-size:.9rem}';

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)} · Sightline</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

/** The authorization request travels through the forms as hidden fields. */
function hiddenFields(params: AuthorizeParamsT, csrf: string): string {
  const fields: [string, string | undefined][] = [...Object.entries(params), ['csrf', csrf]];
  return fields
    .filter((f): f is [string, string] => typeof f[1] === 'string')
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
}

/** Sign-in form shown when the browser has no session. */
export function loginPage(params: AuthorizeParamsT, csrf: string, clientName: string, error?: string): string {
  return page(
    'Sign in',
    `<h1>Sign in to connect ${escapeHtml(clientName)}</h1>` +
      (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '') +
      `<form method="post" action="/oauth/authorize">${hiddenFields(params, csrf)}` +
      `<input type="hidden" name="action" value="login">` +
      `<label>Email <input type="email" name="email" autocomplete="username" required></label>` +
      `<label>Password <input type="password" name="password" autocomplete="current-password" required></label>` +
      `<button type="submit">Sign in</button></form>`,
  );
}

/** Consent: what the client asks for, Approve or Deny. */
export function consentPage(params: AuthorizeParamsT, csrf: string, view: { clientName: string; email: string; scope: 'read' | 'write'; redirectUri: string }): string {
  const what = view.scope === 'write' ? 'read your analytics and change your projects and goals' : 'read your projects and analytics';
  return page(
    'Authorize',
    `<h1>${escapeHtml(view.clientName)} wants to access your Sightline account</h1>` +
      `<p>Signed in as <strong>${escapeHtml(view.email)}</strong>.</p>` +
      `<p>It will be able to <strong>${escapeHtml(what)}</strong> through the MCP endpoint.</p>` +
      `<p class="muted">You will be sent back to ${escapeHtml(view.redirectUri)}</p>` +
      `<form method="post" action="/oauth/authorize">${hiddenFields(params, csrf)}` +
      `<button type="submit" name="action" value="approve">Approve</button>` +
      `<button type="submit" name="action" value="deny">Deny</button></form>`,
  );
}

/** A request that cannot be sent back to the client (unknown client or redirect URI). */
export function errorPage(message: string): string {
  return page('Authorization error', `<h1>This authorization request cannot be completed</h1><p class="error">${escapeHtml(message)}</p>`);
}
