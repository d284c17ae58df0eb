import { Hono, type Context } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { publicBase } from '../oauth/base-url.js';
import { etagMatches } from '../tracker/routes.js';
import { CSS_ETAG, CSS_NAME, DASHBOARD_CSS, DASHBOARD_JS, JS_ETAG, JS_NAME } from './assets.generated.js';
import { findPublicProject } from './public-project.js';
import { renderNotFound, renderShell } from './shell.js';

/** Hashed asset names never change content: cache for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Scripts and data only from here; uPlot and the app set style attributes, hence 'unsafe-inline' for styles. */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' https: data:; connect-src 'self'; base-uri 'none'; form-action 'self'";

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

/** The HTML document: never cached (it names the current asset hashes). */
function page(c: Context<AppEnv>, body: string, status: 200 | 404, frameable: boolean) {
  c.header('Cache-Control', 'no-cache');
  c.header('Content-Security-Policy', `${CSP}; frame-ancestors ${frameable ? '*' : "'none'"}`);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'same-origin');
  return c.html(body, status);
}

function asset(app: Hono<AppEnv>, name: string, body: string, etag: string, type: string) {
  app.get(`/assets/${name}`, (c) => {
    c.header('Cache-Control', IMMUTABLE);
    c.header('ETag', etag);
    c.header('X-Content-Type-Options', 'nosniff');
    if (etagMatches(c.req.header('If-None-Match'), etag)) return c.body(null, 304);
    c.header('Content-Type', type);
    return c.body(body);
  });
}

/**
 * The dashboard: the app at `/` (hash-routed single page), its hashed assets built into the
 * bundle (src/dashboard/assets.generated.ts, so Workers and Node serve them without a file
 * system), and the public stats page `/share/{domain}` (404 unless public stats are on).
 */
export function dashboardRoutes() {
  const app = new Hono<AppEnv>();
  asset(app, JS_NAME, DASHBOARD_JS, JS_ETAG, 'application/javascript; charset=utf-8');
  asset(app, CSS_NAME, DASHBOARD_CSS, CSS_ETAG, 'text/css; charset=utf-8');

  app.get(
    '/',
    describeRoute({ tags: ['Dashboard'], summary: 'The dashboard web app (HTML)', responses: { 200: html('The app') } }),
    (c) => page(c, renderShell({ base: publicBase(c), title: 'Sightline' }), 200, false),
  );

  app.get(
    '/share/:domain',
    describeRoute({
      tags: ['Dashboard'],
      summary: 'Public stats page of a project (HTML)',
      description: '404 unless the project has publicStatsEnabled.',
      responses: { 200: html('The public stats page'), 404: html('Not public or no such project') },
    }),
    async (c) => {
      const project = await findPublicProject(c);
      if (!project) return page(c, renderNotFound(), 404, false);
      const share = { domain: project.domain, name: project.name, brandColor: project.brandColor };
      return page(c, renderShell({ base: publicBase(c), title: `${project.name} · Public stats`, share }), 200, true);
    },
  );
  return app;
}
