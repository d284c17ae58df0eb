import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { bearerSecurity, errorsFor } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject } from '../projects/access.js';
import { byCredential, rateLimit } from '../ratelimit.js';
import * as v from 'valibot';
import { FiltersQuery } from '../reports/filter-input.js';
import { generalPeriod, limitParam } from '../reports/params.js';
import { buildExportCsv } from './build.js';
import { CSV_CONTENT_TYPE, CSV_OPENAPI_CONTENT } from './negotiate.js';

/** `period` as every report takes it (default `30d`); `limit` 1–500 rows per section, default 100; `filters` for every section. */
export const ExportQuery = v.object({ period: generalPeriod(), limit: limitParam(500, 100), ...FiltersQuery });

/** `sightline-{domain}-{period}.csv`; a normalized domain is already safe, this keeps it so. */
export const exportFileName = (domain: string, period: string) =>
  `sightline-${domain.replace(/[^a-z0-9.-]/gi, '_')}-${period}.csv`;

/** Async iterable of text → byte stream; a failure mid-way errors the stream (the client sees a cut body). */
function textStream(first: string | undefined, rest: AsyncIterator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (first !== undefined) controller.enqueue(encoder.encode(first));
    },
    async pull(controller) {
      const next = await rest.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await rest.return?.();
    },
  });
}

/** CSV export under /api/v1/projects/:domain/export. */
export function exportRoutes() {
  const app = new Hono<AppEnv>();
  app.get(
    '/:domain/export',
    describeRoute({
      tags: ['Export'],
      summary: 'Download the analytics of a period as CSV',
      description:
        'Comment lines (`# `) name the export, the domain, the period and the generation time; then the sections ' +
        'overview (`metric,value`), pages (`path,pageviews,visitors`), referrers (`referrer,pageviews,visitors`), ' +
        'countries (`country,country_code,pageviews,visitors`), browsers (`browser,visitors`) and operating systems ' +
        '(`os,visitors`), each a comment line naming it, a header row and at most `limit` data rows, separated by a ' +
        'blank line. Text cells starting with = + - @ TAB or CR are prefixed with \' and quoted. `filters` (the reports\' grammar) ' +
        'applies to every section and is named in a `# filters:` comment line.',
      security: bearerSecurity,
      responses: {
        200: {
          description: 'The export, streamed as it is computed',
          headers: {
            'Content-Disposition': {
              description: 'attachment; filename="sightline-{domain}-{period}.csv"',
              schema: { type: 'string' },
            },
          },
          content: CSV_OPENAPI_CONTENT,
        },
        ...errorsFor(400, 401, 404, 429),
      },
    }),
    // Its own limit per credential, on top of the API limit.
    rateLimit('export', byCredential),
    validate('query', ExportQuery),
    async (c) => {
      const { project, role } = await loadProject(c);
      const input = c.req.valid('query');
      const chunks = buildExportCsv({ deps: c.get('services').deps, project, role }, input);
      // The first chunk (preamble and overview) is awaited before answering, so a failing
      // database still gives a proper error status instead of a cut 200.
      const first = await chunks.next();
      return c.body(textStream(first.done ? undefined : first.value, chunks), 200, {
        'Content-Type': CSV_CONTENT_TYPE,
        'Content-Disposition': `attachment; filename="${exportFileName(project.domain, input.period)}"`,
        'Cache-Control': 'no-store',
      });
    },
  );
  return app;
}
