import type { Context } from 'hono';
import type { AppEnv } from '../deps.js';
import { reportCsvResponse, wantsCsv } from '../export/negotiate.js';
import type { ReportDefinition } from './definition.js';

/**
 * Sends a report's result. This is the one place content negotiation happens: JSON, or with
 * `Accept: text/csv` one CSV section built from `def.csv` (406 when the report has none).
 */
export function respond(c: Context<AppEnv>, def: ReportDefinition, result: unknown): Response {
  if (wantsCsv(c)) return reportCsvResponse(c, def, result);
  return c.json(result as object);
}
