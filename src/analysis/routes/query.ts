import * as v from 'valibot';
import { csvSection } from '../../export/csv.js';
import { rangeEntries, withRangeChecks } from '../../reports/params.js';
import { customRangeDays, hourIntervalAllowed } from '../../reports/range.js';
import { PeriodEntries } from '../../reports/shape.js';
import { DIMENSION_NAMES, isDimension } from '../dimensions.js';
import { FiltersBody } from '../filters.js';
import { METRICS, TIME_DIMENSIONS, type Dimension, type Metric } from '../question.js';
import { runQuestion, type AnswerRow } from '../run.js';
import { defineEndpoint, type AnalysisContext } from './endpoint.js';
import { OFFSET_MAX } from './params.js';
import { rangeBounds, resolveRanges } from '../../reports/project-range.js';

/** Most dimensions one question may group by. */
export const QUERY_DIMENSIONS_MAX = 3;
/** Largest page of rows `POST query` answers, and its default. */
export const QUERY_LIMIT_MAX = 10_000;
export const QUERY_LIMIT_DEFAULT = 1000;

const unique = <T>(items: T[]) => new Set(items).size === items.length;

export const QUERY_MESSAGES = {
  metrics: `metrics must be a non-empty array of distinct metrics from: ${METRICS.join(', ')}`,
  dimensions: `dimensions must be an array of at most ${QUERY_DIMENSIONS_MAX} distinct dimensions from: ${[...DIMENSION_NAMES, ...TIME_DIMENSIONS].join(', ')}`,
  orderBy: 'orderBy must be an array of [name, "asc" | "desc"] whose names are metrics or dimensions of the question',
  limit: `limit must be an integer from 1 to ${QUERY_LIMIT_MAX}`,
  offset: `offset must be an integer from 0 to ${OFFSET_MAX}`,
  hour: 'time:hour is allowed for periods of at most 7 days',
  unknownField: 'unknown field: the body may hold metrics, dimensions, filters, period, from, to, compare, orderBy, limit, offset',
} as const;

const { interval: _interval, ...rangeFields } = rangeEntries();
const integer = (min: number, max: number, message: string, fallback: number) =>
  v.optional(v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message)), fallback);

/** `POST query` body: a question (README "Analysis") as JSON. */
export const QueryBody = v.pipe(
  withRangeChecks(
    v.objectWithRest(
      {
        metrics: v.pipe(v.array(v.picklist(METRICS, QUERY_MESSAGES.metrics), QUERY_MESSAGES.metrics), v.minLength(1, QUERY_MESSAGES.metrics), v.check(unique, QUERY_MESSAGES.metrics)),
        dimensions: v.optional(
          v.pipe(
            v.array(v.pipe(v.string(QUERY_MESSAGES.dimensions), v.check(isDimension, QUERY_MESSAGES.dimensions)), QUERY_MESSAGES.dimensions),
            v.maxLength(QUERY_DIMENSIONS_MAX, QUERY_MESSAGES.dimensions),
            v.check(unique, QUERY_MESSAGES.dimensions),
            v.transform((names) => names as Dimension[]),
          ),
          [],
        ),
        filters: v.optional(FiltersBody, []),
        ...rangeFields,
        orderBy: v.optional(v.array(v.strictTuple([v.string(QUERY_MESSAGES.orderBy), v.picklist(['asc', 'desc'], QUERY_MESSAGES.orderBy)], QUERY_MESSAGES.orderBy), QUERY_MESSAGES.orderBy)),
        limit: integer(1, QUERY_LIMIT_MAX, QUERY_MESSAGES.limit, QUERY_LIMIT_DEFAULT),
        offset: integer(0, OFFSET_MAX, QUERY_MESSAGES.offset, 0),
      },
      // Any other key is a mistake worth naming (a typo would otherwise be ignored silently).
      v.never(QUERY_MESSAGES.unknownField),
      // The object's message is what a missing key gets, and `metrics` is the one required key.
      QUERY_MESSAGES.metrics,
    ),
  ),
  v.forward(
    v.check((q) => (q.orderBy ?? []).every(([name]) => (q.metrics as readonly string[]).includes(name) || (q.dimensions as readonly string[]).includes(name)), QUERY_MESSAGES.orderBy),
    ['orderBy'],
  ),
  v.forward(
    v.check((q) => !q.dimensions.includes('time:hour') || hourIntervalAllowed(q.period, q.from !== undefined && q.to !== undefined ? customRangeDays(q.from, q.to) : null), QUERY_MESSAGES.hour),
    ['dimensions'],
  ),
);
export type QueryInput = v.InferOutput<typeof QueryBody>;

const Row = v.pipe(v.record(v.string(), v.union([v.string(), v.number(), v.null()])), v.description('Each dimension value under its name, each metric under its name (rates null when undefined)'));
export const QueryAnswer = v.object({
  ...PeriodEntries,
  rows: v.array(Row),
  comparison: v.optional(v.object({ from: v.string(), to: v.string(), rows: v.array(Row) })),
});

export interface QueryResult {
  period: string;
  from: string;
  to: string;
  rows: AnswerRow[];
  comparison?: { from: string; to: string; rows: AnswerRow[] };
}

/**
 * Answers a question: its rows in the range, and with `compare` the same question (same
 * filters, order and page) over the comparison range.
 */
export async function runQuery(ctx: AnalysisContext, input: QueryInput): Promise<QueryResult> {
  const { period, comparison } = await resolveRanges(ctx.deps, ctx.project, input);
  const question = {
    metrics: input.metrics as Metric[],
    dimensions: input.dimensions,
    filters: input.filters,
    ...(input.orderBy ? { orderBy: input.orderBy as [Metric | Dimension, 'asc' | 'desc'][] } : {}),
    limit: input.limit,
    offset: input.offset,
  };
  const [rows, previous] = await Promise.all([
    runQuestion(ctx.deps, ctx.project.id, period, question),
    comparison ? runQuestion(ctx.deps, ctx.project.id, comparison, question) : null,
  ]);
  const answer: QueryResult = { period: period.key, ...rangeBounds(period), rows };
  return comparison && previous ? { ...answer, comparison: { ...rangeBounds(comparison), rows: previous } } : answer;
}

/** CSV: one section of rows (dimensions, then metrics), and with compare a second one for the comparison range. */
function queryCsv(answer: QueryResult, input: QueryInput): string {
  const columns = [...input.dimensions, ...input.metrics].map((name) => ({ header: name, value: (r: AnswerRow) => r[name] }));
  let out = csvSection(`query ${answer.from}..${answer.to}`, columns, answer.rows);
  if (answer.comparison) out += csvSection(`comparison ${answer.comparison.from}..${answer.comparison.to}`, columns, answer.comparison.rows);
  return out;
}

/** POST /:domain/query */
export const queryEndpoint = defineEndpoint({
  name: 'query',
  method: 'POST',
  path: '/:domain/query',
  summary: 'Query: metrics by up to three dimensions',
  description:
    'Body `{metrics, dimensions?, filters?: [[op, dimension, values]], period, from?, to?, compare?, orderBy?: [[name, "asc"|"desc"]], limit?, offset?}`. ' +
    'Dimensions: any filter dimension or time:hour (periods of at most 7 days), time:day, time:month. Default order: time ' +
    `ascending, then the first metric descending, then the other dimensions. limit 1–${QUERY_LIMIT_MAX} (default ${QUERY_LIMIT_DEFAULT}). ` +
    'With compare the same question over the comparison range is in `comparison`.',
  input: QueryBody,
  response: QueryAnswer,
  run: runQuery,
  csv: queryCsv,
});
