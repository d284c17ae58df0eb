import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { accountRoutes, authRoutes } from './account/routes.js';
import { authenticate } from './auth/middleware.js';
import type { AppEnv, Deps } from './deps.js';
import { errorResponse, Messages } from './errors.js';
import { openApiDocument } from './openapi.js';
import { projectRoutes } from './projects/routes.js';
import { byCredential, rateLimit } from './ratelimit.js';
import { EVENT_CORS, ingestPublicRoutes } from './ingest/routes.js';
import { ingestApiRoutes, MAX_HITS_BYTES } from './ingest/api-routes.js';
import { MAX_EVENT_BYTES } from './ingest/record-event.js';
import { bodyLimitLookup, bodyLimits, type BodyLimitRule } from './http/body-limit.js';
import { countReads, type ReadRoute } from './http/reads-in-flight.js';
import { reportRoutes } from './reports/routes.js';
import { analysisRoutes } from './analysis/routes/index.js';
import { goalRoutes } from './goals/routes.js';
import { exportRoutes } from './export/routes.js';
import { scheduleRoutes } from './export/schedule-routes.js';
import { trackerRoutes } from './tracker/routes.js';
import { createServices, type Services } from './services.js';
import { mcpRoutes } from './mcp/route.js';
import { wellKnownRoutes } from './oauth/metadata.js';
import { oauthRoutes } from './oauth/routes.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { shareApiRoutes } from './dashboard/share-api.js';
import { memberRoutes } from './projects/member-routes.js';
import { excludedIpRoutes } from './projects/excluded-ip-routes.js';
import { emailReportRoutes } from './notify/email-report-routes.js';
import { alertRoutes } from './notify/alert-routes.js';
import { unsubscribeRoutes } from './notify/unsubscribe-routes.js';

/**
 * Routes whose body limit is not the default 64 KB (src/http/body-limit.ts). Every other route
 * that takes a body (JSON, forms, MCP) gets the default, so a new route is limited too.
 */
export const BODY_LIMITS: readonly BodyLimitRule[] = [
  { method: 'POST', path: '/api/event', limit: MAX_EVENT_BYTES },
  { method: 'POST', path: '/api/v1/projects/:domain/hits', limit: MAX_HITS_BYTES },
  // Streamed at any size; each line is limited instead (MAX_LINE_CHARS, refused as that line's error).
  { method: 'POST', path: '/api/v1/projects/:domain/import', limit: 'stream' },
];

/** POST routes that only read: a question sent as a body. Counted with every GET while answered (deps.readsInFlight). */
export const POSTED_READS: readonly ReadRoute[] = [
  { method: 'POST', path: '/api/v1/projects/:domain/query' },
  { method: 'POST', path: '/mcp' },
];

/**
 * The whole service as one Hono app. It knows nothing of the runtime: the entry points build
 * `deps` (ClickHouse, Redis, clock, sink) and hand them in, and may pass the services when
 * something outside the app shares them (the Node event fast path).
 */
export function createApp(deps: Deps, services: Services = createServices(deps)) {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('services', services);
    await next();
  });
  // CORS first, so even a refused event (413) can be read by the page that sent it.
  app.use('/api/event', cors(EVENT_CORS));
  app.use('*', bodyLimits(BODY_LIMITS));
  if (deps.readsInFlight) app.use('*', countReads(deps.readsInFlight, POSTED_READS));
  app.onError((err, c) => errorResponse(c, err));
  app.notFound((c) => c.json({ error: Messages.notFound }, 404));

  app.get('/health', (c) => c.json({ ok: true }));
  app.route('/', trackerRoutes());
  app.route('/', ingestPublicRoutes());
  app.route('/api/auth', authRoutes());
  app.route('/api/account', accountRoutes());
  // The unsubscribe link of email reports: public, its token is the credential.
  app.route('/', unsubscribeRoutes());

  const v1 = new Hono<AppEnv>();
  v1.use('*', authenticate());
  v1.use('*', rateLimit('api', byCredential));
  v1.route('/projects', projectRoutes());
  v1.route('/projects', ingestApiRoutes());
  v1.route('/projects', reportRoutes());
  v1.route('/projects', analysisRoutes());
  v1.route('/projects', goalRoutes());
  v1.route('/projects', exportRoutes());
  v1.route('/projects', scheduleRoutes());
  v1.route('/projects', memberRoutes());
  v1.route('/projects', excludedIpRoutes());
  v1.route('/projects', emailReportRoutes());
  v1.route('/projects', alertRoutes());
  app.route('/api/v1', v1);

  // The agent endpoint and its OAuth authorization server; MCP tools run the routes above in-process.
  app.route('/.well-known', wellKnownRoutes());
  app.route('/oauth', oauthRoutes());
  app.route('/', mcpRoutes((request, env) => app.fetch(request, env)));

  // The dashboard (app at /, public stats at /share/{domain}) and the read-only API of share pages.
  app.route('/', dashboardRoutes());
  app.route('/api/share', shareApiRoutes());

  const document = openApiDocument(app, bodyLimitLookup(BODY_LIMITS));
  app.get('/openapi.json', async (c) => c.json(await document()));
  return app;
}

export type App = ReturnType<typeof createApp>;
