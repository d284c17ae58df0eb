import * as v from 'valibot';
import { csvSection } from '../../export/csv.js';
import { limitParam, rangeEntries, withRangeChecks } from '../../reports/params.js';
import { PeriodEntries } from '../../reports/shape.js';
import { runQuestion, type AnswerRow } from '../run.js';
import type { FilterDimension, Metric } from '../question.js';
import { defineEndpoint, type AnalysisContext } from './endpoint.js';
import { dimensionParam, filtersParam, MESSAGES, metricsParam, offsetParam } from './params.js';
import { rangeBounds, resolveRanges } from '../../reports/project-range.js';

const { interval: _interval, ...rangeFields } = rangeEntries();

/** `GET breakdown`: the query (unknown keys are ignored, as on every report). */
export const BreakdownQuery = withRangeChecks(
  v.object({
    dimension: dimensionParam(),
    metrics: metricsParam(),
    filters: filtersParam(),
    limit: limitParam(1000, 10),
    offset: offsetParam(),
    ...rangeFields,
  },
  // The object's message is what a missing key gets, and `dimension` is the one required key.
  MESSAGES.dimension),
);
export type BreakdownInput = v.InferOutput<typeof BreakdownQuery>;

const Value = v.union([v.string(), v.number(), v.null()]);
const Metrics = v.pipe(v.record(v.string(), v.nullable(v.number())), v.description('Each asked metric; rates are null when their divisor is 0'));
const BreakdownRow = v.pipe(
  v.objectWithRest({ comparison: v.optional(Metrics) }, Value),
  v.description('The dimension value under the dimension name, each metric under its name, and with compare the comparison values'),
);

export const BreakdownAnswer = v.object({
  ...PeriodEntries,
  dimension: v.string(),
  data: v.array(BreakdownRow),
  comparison: v.optional(v.object({ from: v.string(), to: v.string() })),
});

type Row = AnswerRow & { comparison?: Record<string, number | null> };
export interface BreakdownResult {
  period: string;
  from: string;
  to: string;
  dimension: FilterDimension;
  data: Row[];
  comparison?: { from: string; to: string };
}

// Counts of a value the comparison range never saw are 0; rates over no visit stay null, as the pipeline answers them.
const RATES: ReadonlySet<Metric> = new Set(['bounceRate', 'viewsPerVisit', 'avgDurationSeconds']);
const absent = (metrics: readonly Metric[]) => Object.fromEntries(metrics.map((m) => [m, RATES.has(m) ? null : 0]));

/**
 * One dimension's values ranked by the first metric (ties by value), a page of them; with
 * `compare` each row gains its values in the comparison range, read for exactly those values.
 */
export async function runBreakdown(ctx: AnalysisContext, input: BreakdownInput): Promise<BreakdownResult> {
  const { period, comparison } = await resolveRanges(ctx.deps, ctx.project, input);
  const question = { metrics: input.metrics, dimensions: [input.dimension], filters: input.filters };
  const rows: Row[] = await runQuestion(ctx.deps, ctx.project.id, period, { ...question, limit: input.limit, offset: input.offset });
  const answer: BreakdownResult = { period: period.key, ...rangeBounds(period), dimension: input.dimension, data: rows };
  if (!comparison) return answer;
  const values = rows.map((r) => String(r[input.dimension]));
  const previous = values.length ? await runQuestion(ctx.deps, ctx.project.id, comparison, { ...question, onlyFirst: values, limit: values.length }) : [];
  const byValue = new Map(previous.map((r) => [String(r[input.dimension]), r]));
  for (const row of rows) {
    const found = byValue.get(String(row[input.dimension]));
    row.comparison = found ? Object.fromEntries(input.metrics.map((m) => [m, found[m] as number | null])) : absent(input.metrics);
  }
  return { ...answer, comparison: rangeBounds(comparison) };
}

/** CSV: the dimension, each metric, and with compare `comparison_<metric>` columns. */
function breakdownCsv(answer: BreakdownResult, input: BreakdownInput): string {
  const { dimension } = answer;
  const { metrics } = input;
  const columns = [
    { header: dimension, value: (r: Row) => r[dimension] },
    ...metrics.map((m) => ({ header: m, value: (r: Row) => r[m] })),
    ...(answer.comparison ? metrics.map((m) => ({ header: `comparison_${m}`, value: (r: Row) => r.comparison?.[m] })) : []),
  ];
  return csvSection(`breakdown by ${dimension} ${answer.from}..${answer.to}`, columns, answer.data);
}

/** GET /:domain/breakdown */
export const breakdownEndpoint = defineEndpoint({
  name: 'breakdown',
  method: 'GET',
  path: '/:domain/breakdown',
  summary: 'Breakdown: one dimension ranked by metrics',
  description:
    'Values of `dimension` (any filter dimension, prop:<key> included) with the asked `metrics` (default visitors), ranked by ' +
    'the first metric descending, ties by value ascending; `limit` 1–1000 (default 10) and `offset` page through them. ' +
    '`filters`, `period` (custom with from/to, all) and `compare` as on the other reports; with compare each row has `comparison`.',
  input: BreakdownQuery,
  response: BreakdownAnswer,
  run: runBreakdown,
  csv: breakdownCsv,
});
