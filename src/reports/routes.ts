import { Hono, type Context } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject } from '../projects/access.js';
import type { ReportDefinition } from './definition.js';
import { reports } from './registry.js';
import { respond } from './respond.js';

function mount(app: Hono<AppEnv>, def: ReportDefinition) {
  const doc = describeRoute({
    tags: ['Reports'],
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    security: bearerSecurity,
    responses: { 200: json(def.summary, def.response), ...errorsFor(400, 401, 404, 429) },
  });
  const handler = async (c: Context<AppEnv>) => {
    const { project, role } = await loadProject(c, def.roles);
    // Path parameters beyond `domain` (e.g. visitorId) join the query input.
    const query = c.req.valid('query' as never) as object;
    const params = def.params ? (c.req.valid('param' as never) as object) : {};
    const result = await def.run({ deps: c.get('services').deps, project, role }, { ...query, ...params });
    return respond(c, def, result);
  };
  if (def.params) {
    app.get(def.path, doc, validate('param', def.params), validate('query', def.query), handler as never);
  } else {
    app.get(def.path, doc, validate('query', def.query), handler as never);
  }
}

/**
 * Report routes under /api/v1/projects (auth and rate limit come from the mount point), one
 * GET per registered definition: validate the query, resolve the caller's project (404 rule),
 * run the report, answer.
 */
export function reportRoutes() {
  const app = new Hono<AppEnv>();
  for (const def of reports) mount(app, def);
  return app;
}
