import type { Context } from 'hono';
import { accepts } from 'hono/accepts';
import { ApiError } from '../errors.js';
import type { ReportDefinition } from '../reports/definition.js';
import { csvSection } from './csv.js';

/** Content type of every CSV answer. */
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/** OpenAPI `content` entry of a CSV answer (report routes with a CSV form, the export). */
export const CSV_OPENAPI_CONTENT = { 'text/csv': { schema: { type: 'string' as const } } };

/** Shown with 406 when a report has no CSV form. */
export const CSV_UNAVAILABLE = 'CSV is not available for this report';

/**
 * True when the request's `Accept` prefers `text/csv` over JSON. Wildcards (`*` and `*\/*`)
 * never pick CSV, so browsers and clients that send no preference keep getting JSON.
 */
export function wantsCsv(c: Context): boolean {
  return accepts(c, { header: 'Accept', supports: ['application/json', 'text/csv'], default: 'application/json' }) === 'text/csv';
}

/**
 * A report's result as one CSV section (comment line naming it, header row, rows), with the
 * export's escaping. Reports without a CSV form answer 406.
 */
export function reportCsvResponse(c: Context, def: ReportDefinition, result: unknown): Response {
  if (!def.csv) throw new ApiError(406, CSV_UNAVAILABLE);
  const body = csvSection(def.csv.title, def.csv.columns, def.csv.rows(result));
  return c.body(body, 200, { 'Content-Type': CSV_CONTENT_TYPE });
}
