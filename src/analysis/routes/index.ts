import { Hono, type Context } from 'hono';
import { describeRoute, resolver } from 'hono-openapi';
import type { AppEnv } from '../../deps.js';
import { CSV_CONTENT_TYPE, CSV_OPENAPI_CONTENT, wantsCsv } from '../../export/negotiate.js';
import { bearerSecurity, errorsFor } from '../../http/openapi-helpers.js';
import { validate } from '../../http/validate.js';
import { loadProject } from '../../projects/access.js';
import { breakdownEndpoint } from './breakdown.js';
import { withAnswerCache, type AnalysisEndpoint } from './endpoint.js';
import { queryEndpoint } from './query.js';
import { realtimeEndpoint } from './realtime.js';

/** The analysis endpoints, in the order of the API document and the MCP tool list. */
export const analysisEndpoints: readonly AnalysisEndpoint[] = [breakdownEndpoint, queryEndpoint, realtimeEndpoint].map(withAnswerCache);

function mount(app: Hono<AppEnv>, e: AnalysisEndpoint) {
  const target = e.method === 'GET' ? 'query' : 'json';
  const doc = describeRoute({
    tags: ['Analysis'],
    summary: e.summary,
    description: `${e.description} \`Accept: text/csv\` answers CSV.`,
    security: bearerSecurity,
    responses: {
      200: { description: e.summary, content: { 'application/json': { schema: resolver(e.response) }, ...CSV_OPENAPI_CONTENT } },
      ...errorsFor(400, 401, 404, 429),
    },
  });
  const handler = async (c: Context<AppEnv>) => {
    // Validation first, then the project (404 rule), as on the report routes.
    const input = c.req.valid(target as never) as unknown;
    const { project } = await loadProject(c);
    const answer = await e.run({ deps: c.get('services').deps, project }, input);
    if (wantsCsv(c)) return c.body(e.csv(answer, input), 200, { 'Content-Type': CSV_CONTENT_TYPE });
    return c.json(answer as object);
  };
  if (e.method === 'GET') app.get(e.path, doc, validate('query', e.input), handler as never);
  else app.post(e.path, doc, validate('json', e.input), handler as never);
}

/**
 * Analysis routes under /api/v1/projects (read scope; auth and rate limit come from the mount
 * point): `GET breakdown`, `POST query`, `GET realtime`. Their MCP tools run the same `run`.
 */
export function analysisRoutes() {
  const app = new Hono<AppEnv>();
  for (const e of analysisEndpoints) mount(app, e);
  return app;
}
