import { Hono, type Context } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { breakdownEndpoint } from '../analysis/routes/breakdown.js';
import { analysisEndpoints } from '../analysis/routes/index.js';
import type { AnalysisEndpoint } from '../analysis/routes/endpoint.js';
import { realtimeEndpoint } from '../analysis/routes/realtime.js';
import type { AppEnv } from '../deps.js';
import { errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { byClientIp, rateLimit } from '../ratelimit.js';
import type { ReportDefinition } from '../reports/definition.js';
import { reports } from '../reports/registry.js';
import { loadPublicProject } from './public-project.js';
import { SHARED_VIEWS, type SharedReport } from './share-views.js';

/** Reports a public stats page shows (src/dashboard/share-views.ts has what of each). */
export const SHARED_REPORTS = Object.keys(SHARED_VIEWS) as SharedReport[];

/** What the share page needs to draw itself: the project's public face. */
export const SharedProject = v.object({
  name: v.string(),
  domain: v.string(),
  timeZone: v.string(),
  brandColor: v.nullable(v.string()),
  icon: v.nullable(v.string()),
});

function mountReport(app: Hono<AppEnv>, def: ReportDefinition, publicView: v.GenericSchema | null) {
  const response = publicView ?? def.response;
  app.get(
    def.path,
    describeRoute({
      tags: ['Public stats'],
      summary: `Public: ${def.summary}`,
      description: `The ${def.name} report of a project with public stats enabled, as its public page shows it; no credential. 404 when the project does not exist or its public stats are off.`,
      responses: { 200: json(def.summary, response), ...errorsFor(400, 404, 429) },
    }),
    validate('query', def.query),
    async (c: Context<AppEnv>) => {
      const project = await loadPublicProject(c);
      const query = c.req.valid('query' as never) as object;
      // Read-only and aggregate: the viewer gets a member's view of the shared reports.
      const result = await def.run({ deps: c.get('services').deps, project, role: 'member' }, query);
      // JSON only (the page reads no CSV), cut down to the public view's fields where it has one.
      return c.json((publicView ? v.parse(publicView, result) : result) as object);
    },
  );
}

/**
 * Analysis routes a public stats page reads: breakdown (aggregates of one dimension, for the
 * cards' tabs and details) and realtime (the current visitor count and "now" pages). Both answer
 * counts per value only; `POST query` stays private (not needed by the page).
 */
export const SHARED_ANALYSIS: readonly AnalysisEndpoint[] = analysisEndpoints.filter((e) => e.name === breakdownEndpoint.name || e.name === realtimeEndpoint.name);

function mountAnalysis(app: Hono<AppEnv>, e: AnalysisEndpoint) {
  app.get(
    e.path,
    describeRoute({
      tags: ['Public stats'],
      summary: `Public: ${e.summary}`,
      description: `${e.description} For a project with public stats enabled; no credential. 404 when the project does not exist or its public stats are off. JSON only.`,
      responses: { 200: json(e.summary, e.response), ...errorsFor(400, 404, 429) },
    }),
    validate('query', e.input),
    async (c: Context<AppEnv>) => {
      const input = c.req.valid('query' as never) as unknown;
      const project = await loadPublicProject(c);
      return c.json((await e.run({ deps: c.get('services').deps, project }, input)) as object);
    },
  );
}

/**
 * The read-only API behind /share/{domain}, mounted at /api/share. Each route runs the report
 * registry's own definition (no second copy of report logic); rate limited per client address.
 */
export function shareApiRoutes() {
  const app = new Hono<AppEnv>();
  app.use('*', rateLimit('api', (c) => `share:${byClientIp(c)}`));
  app.get(
    '/:domain',
    describeRoute({
      tags: ['Public stats'],
      summary: 'Public: name and brand of a project with public stats enabled',
      responses: { 200: json('Shared project', SharedProject), ...errorsFor(404, 429) },
    }),
    async (c) => {
      const p = await loadPublicProject(c);
      return c.json({ name: p.name, domain: p.domain, timeZone: p.timeZone, brandColor: p.brandColor, icon: p.icon });
    },
  );
  for (const def of reports) {
    if (def.name in SHARED_VIEWS) mountReport(app, def, SHARED_VIEWS[def.name as SharedReport]);
  }
  for (const e of SHARED_ANALYSIS) mountAnalysis(app, e);
  return app;
}
