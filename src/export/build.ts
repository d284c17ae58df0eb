import { filtersToText } from '../analysis/filters.js';
import type { Filter } from '../analysis/question.js';
import { ApiError } from '../errors.js';
import type { ReportContext, ReportDefinition } from '../reports/definition.js';
import { takesFilters } from '../reports/filter-input.js';
import type { PeriodKey } from '../reports/periods.js';
import { findReport } from '../reports/registry.js';
import { resolveFor } from '../reports/shape.js';
import { CSV_EOL, csvComment, csvSection } from './csv.js';

/**
 * The export's sections, in contract order (§4.4), as report names from the registry: each
 * section is that report's own `run` and `csv` form, so the export never has SQL of its own.
 *
 * Headers:
 * - overview — `metric,value`; rows `visitors`, `pageviews`, `sessions`, `avg_duration_seconds` (empty when null)
 * - pages — `path,pageviews,visitors`
 * - referrers — `referrer,pageviews,visitors` (`(direct)` for traffic without a referrer)
 * - countries — `country,country_code,pageviews,visitors`
 * - browsers — `browser,visitors`
 * - operating systems — `os,visitors`
 */
export const EXPORT_SECTIONS = ['stats', 'pages', 'referrers', 'countries', 'browsers', 'os'] as const;

export interface ExportInput {
  period: PeriodKey;
  /** Rows per ranked section, 1–500. */
  limit: number;
  /** Conditions every section applies (none when absent). */
  filters?: readonly Filter[];
}

type CsvReport = ReportDefinition & { csv: NonNullable<ReportDefinition['csv']> };

function sectionReport(name: string): CsvReport {
  const def = findReport(name);
  if (!def?.csv) throw new Error(`export section ${name} needs a registered report with a CSV form`);
  return def as CsvReport;
}

/**
 * Why `filters` cannot be exported, or null: every section must apply them, since a section
 * that silently ignored them would present unfiltered numbers as filtered ones.
 */
export function exportFiltersProblem(filters: readonly Filter[] | undefined): string | null {
  if (!filters?.length) return null;
  const without = EXPORT_SECTIONS.filter((name) => !takesFilters(sectionReport(name).query));
  return without.length ? `filters: not available in the export yet (sections without them: ${without.join(', ')})` : null;
}

/** The comment lines that open an export: what it is, the project, the period, when. */
export function exportPreamble(ctx: ReportContext, input: ExportInput): string {
  const period = resolveFor(ctx, input.period);
  return (
    csvComment('Sightline export') +
    csvComment(`domain: ${ctx.project.domain}`) +
    csvComment(`period: ${period.key} (from ${new Date(period.from).toISOString()} to ${new Date(period.now).toISOString()})`) +
    csvComment(`time zone: ${period.bucketTimeZone}`) +
    csvComment(`generated: ${new Date(ctx.deps.clock.now()).toISOString()}`) +
    csvComment(`rows per section: at most ${input.limit}`) +
    (input.filters?.length ? csvComment(`filters: ${filtersToText(input.filters)}`) : '')
  );
}

/**
 * The whole export as CSV text chunks: the preamble (with a `# filters:` line when filtered) and
 * the overview section first, then one chunk per section, each preceded by a blank line. Every section's query starts at once (the
 * engine runs them side by side) and each chunk is yielded as soon as it and the ones before it
 * are ready, so a caller can stream it. Reusable outside HTTP (e.g. a scheduled export job).
 */
export async function* buildExportCsv(ctx: ReportContext, input: ExportInput): AsyncGenerator<string, void, undefined> {
  const problem = exportFiltersProblem(input.filters);
  if (problem) throw new ApiError(400, problem);
  const defs = EXPORT_SECTIONS.map(sectionReport);
  // Unfiltered sections get exactly the input they always had.
  const sectionInput = { period: input.period, limit: input.limit, ...(input.filters?.length ? { filters: input.filters } : {}) };
  const pending = defs.map((def) => def.run(ctx, sectionInput));
  // Results awaited later must not count as unhandled if an earlier section fails first.
  for (const p of pending) p.catch(() => {});
  let text = exportPreamble(ctx, input);
  for (const [i, def] of defs.entries()) {
    const result = await pending[i];
    text += CSV_EOL + csvSection(def.csv.title, def.csv.columns, def.csv.rows(result));
    yield text;
    text = '';
  }
}
