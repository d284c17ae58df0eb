import { Hono, type Context } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { getProject } from '../projects/store.js';
import { emailReportStore } from './email-report-store.js';
import { escapeHtml } from './format.js';
import { UNSUBSCRIBE_PATH, unsubscribeSecret, verifyUnsubscribe, type UnsubscribeClaim } from './unsubscribe-token.js';

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

/** A small self-contained page: no scripts, no external requests, a form that posts only here. */
function page(c: Context<AppEnv>, status: 200 | 400, heading: string, body: string) {
  c.header('Cache-Control', 'no-store');
  c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  c.header('X-Content-Type-Options', 'nosniff');
  // The token is in the URL: never send it on as a referrer.
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Robots-Tag', 'noindex');
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `<meta name="color-scheme" content="light dark"><title>${escapeHtml(heading)} · Sightline</title></head>` +
      `<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5">` +
      `<h1 style="font-size:1.4rem">${escapeHtml(heading)}</h1>${body}</body></html>`,
    status,
  );
}

const invalid = (c: Context<AppEnv>) =>
  page(c, 400, 'Invalid link', '<p>This unsubscribe link is not valid. Copy the whole link from the email, or ask an admin of the site to remove you.</p>');

async function claimOf(c: Context<AppEnv>): Promise<UnsubscribeClaim | null> {
  const token = c.req.query('token');
  if (!token) return null;
  return verifyUnsubscribe(await unsubscribeSecret(c.get('services').deps), token);
}

/**
 * The unsubscribe link of email reports, reachable without signing in: GET shows a confirm page
 * (link scanners that fetch URLs must not unsubscribe anyone), POST removes that recipient — the
 * page's button, and the one-click POST mail clients send (RFC 8058, body
 * `List-Unsubscribe=One-Click`). POST is idempotent: an address already removed answers the same.
 */
export function unsubscribeRoutes() {
  const app = new Hono<AppEnv>();

  app.get(
    UNSUBSCRIBE_PATH,
    describeRoute({
      tags: ['Notifications'],
      summary: 'Confirm page of an email report unsubscribe link (HTML, no sign-in)',
      parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
      responses: { 200: html('The confirm page with its Unsubscribe button'), 400: html('Invalid link') },
    }),
    async (c) => {
      const claim = await claimOf(c);
      if (!claim) return invalid(c);
      const { redis } = c.get('services').deps;
      const [project, report] = await Promise.all([getProject(redis, claim.projectId), emailReportStore.get(redis, claim.projectId)]);
      const subscribed = !!project && !!report && report.recipients.includes(claim.email);
      if (!subscribed) {
        return page(c, 200, 'Not subscribed', `<p>${escapeHtml(claim.email)} does not get ${project ? `the email report of ${escapeHtml(project.domain)}` : 'this email report'} (anymore).</p>`);
      }
      const action = `${UNSUBSCRIBE_PATH}?token=${encodeURIComponent(c.req.query('token') ?? '')}`;
      return page(
        c,
        200,
        'Unsubscribe',
        `<p>Stop sending the ${escapeHtml(report.report.frequency)} email report of <strong>${escapeHtml(project.domain)}</strong> to <strong>${escapeHtml(claim.email)}</strong>?</p>` +
          `<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
          `<button type="submit" style="font:inherit;padding:.5rem 1rem">Unsubscribe</button></form>`,
      );
    },
  );

  app.post(
    UNSUBSCRIBE_PATH,
    describeRoute({
      tags: ['Notifications'],
      summary: 'Unsubscribe the recipient of the signed link (RFC 8058 one-click; no sign-in)',
      parameters: [{ name: 'token', in: 'query', required: true, schema: { type: 'string' } }],
      description: 'Body `List-Unsubscribe=One-Click` (application/x-www-form-urlencoded) as mail clients send it; any body is accepted.',
      responses: { 200: html('Unsubscribed (also when the address was already removed)'), 400: html('Invalid link') },
    }),
    async (c) => {
      const claim = await claimOf(c);
      if (!claim) return invalid(c);
      const { redis } = c.get('services').deps;
      await emailReportStore.removeRecipient(redis, claim.projectId, claim.email);
      const project = await getProject(redis, claim.projectId);
      return page(c, 200, 'Unsubscribed', `<p>${escapeHtml(claim.email)} will no longer get the email report${project ? ` of ${escapeHtml(project.domain)}` : ''}.</p>`);
    },
  );

  return app;
}
