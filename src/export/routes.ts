import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { bearerSecurity, errorsFor } from '../http/openapi-helpers.js';
import { validate } from '../http/validate.js';
import { loadProject } from '../projects/access.js';
import { byCredential, rateLimit } from '../ratelimit.js';
import * as v from 'valibot';
import { ranged, rangeOnlyEntries } from '../reports/analysis-input.js';
import { FiltersQuery } from '../reports/filter-input.js';
import { limitParam } from '../reports/params.js';
import { buildExportCsv, type ExportInput } from './build.js';
import { CSV_CONTENT_TYPE, CSV_OPENAPI_CONTENT } from './negotiate.js';

/**
 * `period` as the ranged reports take it (presets, `custom` with `from`/`to`, `all`; default `30d`),
 * with their rules and messages; `limit` 1–500 rows per section, default 100; `filters` for every section.
 */
export const ExportQuery = ranged(v.object({ ...rangeOnlyEntries(), limit: limitParam(500, 100), ...FiltersQuery }));

/**
 * `sightline-{domain}-{period}.csv`, a custom range as `custom-{from}-{to}`; a normalized domain
 * is already safe, this keeps it so (the dates are validated YYYY-MM-DD).
 */
export function exportFileName(domain: string, period: string | Pick<ExportInput, 'period' | 'from' | 'to'>): string {
  const label = typeof period === 'string' ? period : period.period === 'custom' ? `custom-${period.from}-${period.to}` : period.period;
  return `sightline-${domain.replace(/[^a-z0-9.-]/gi, '_')}-${label}.csv`;
}

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
        'applies to every section and is named in a `# filters:` comment line. `period=custom&from=YYYY-MM-DD&to=YYYY-MM-DD` and ' +
        '`period=all` work as in the reports (the comment line reads `# period: custom 2026-03-01 to 2026-03-09 (from … to …)`).',
      security: bearerSecurity,
      responses: {
        200: {
          description: 'The export, streamed as it is computed',
          headers: {
            'Content-Disposition': {
              description: 'attachment; filename="sightline-{domain}-{period}.csv"; a custom range as sightline-{domain}-custom-{from}-{to}.csv',
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
        'Content-Disposition': `attachment; filename="${exportFileName(project.domain, input)}"`,
        'Cache-Control': 'no-store',
      });
    },
  );
  return app;
}
