import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import { requireWrite } from '../auth/middleware.js';
import type { AppEnv } from '../deps.js';
import { bearerSecurity, errorsFor, json } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject, MANAGERS, requireProject } from './access.js';
import { listExcludedIps, MAX_EXCLUDED_IPS, replaceExcludedIps } from './excluded-ips.js';

const IP_MESSAGE = 'ips must hold IPv4 or IPv6 addresses';

/** Body of PUT /excluded-ips: the whole list (an empty list removes every exclusion). */
export const ExcludedIpsBody = v.object(
  {
    ips: v.pipe(
      v.array(v.pipe(v.string(IP_MESSAGE), v.trim(), v.ip(IP_MESSAGE)), `ips must be an array of at most ${MAX_EXCLUDED_IPS} addresses`),
      v.maxLength(MAX_EXCLUDED_IPS, `ips must be an array of at most ${MAX_EXCLUDED_IPS} addresses`),
    ),
  },
  'Body must be a JSON object with ips',
);

const ExcludedIps = v.object({
  ips: v.pipe(v.array(v.string()), v.description('Addresses whose events are dropped with `X-Sightline-Dropped: excluded-ip`, sorted')),
});

/**
 * Excluded client addresses of a project (the owner's office, uptime monitors), mounted at
 * /api/v1/projects: owners and admins read and replace the list; everyone else gets the project
 * 404. Ingestion on other processes follows within a few seconds (its cache), this one at once.
 */
export function excludedIpRoutes() {
  const app = new Hono<AppEnv>();

  app.get(
    '/:domain/excluded-ips',
    describeRoute({
      tags: ['Projects'],
      summary: 'Client addresses whose events are dropped (owner or admin)',
      security: bearerSecurity,
      responses: { 200: json('Excluded addresses', ExcludedIps), ...errorsFor(401, 404, 429) },
    }),
    async (c) => {
      const { project } = await loadProject(c, MANAGERS);
      return c.json({ ips: await listExcludedIps(c.get('services').deps.redis, project.id) });
    },
  );

  app.put(
    '/:domain/excluded-ips',
    describeRoute({
      tags: ['Projects'],
      summary: 'Replace the excluded client addresses (owner or admin, write scope)',
      description: `At most ${MAX_EXCLUDED_IPS} IPv4 or IPv6 addresses; IPv6 is stored in its canonical form. Tracker events and server-side hits from these addresses are dropped.`,
      security: bearerSecurity,
      responses: { 200: json('The list after the update', ExcludedIps), ...errorsFor(400, 401, 403, 404, 429) },
    }),
    requireWrite(),
    requireProject(MANAGERS),
    validate('json', ExcludedIpsBody),
    async (c) => {
      const services = c.get('services');
      const { project } = await loadProject(c, MANAGERS);
      const ips = await replaceExcludedIps(services.deps.redis, project.id, c.req.valid('json').ips);
      services.ingest.forgetExcluded(project.id);
      return c.json({ ips });
    },
  );
  return app;
}
