import * as v from 'valibot';
import type { Dimension, Filter } from '../analysis/question.js';
import { rangeBounds } from './project-range.js';
import { runQuestion, type AnswerRow } from '../analysis/run.js';
import { filtersOf, rankedQuery, resolveInput, type AnalysisInput } from './analysis-input.js';
import type { CsvColumn, ReportContext } from './definition.js';
import type { ResolvedPeriod } from './periods.js';
import { definePlannedReport } from './planned.js';
import type { Source, SourcedSql } from './planner.js';
import { queryRowsWithDayParts, sourceRead } from './day-parts.js';
import type { RowOf, RowSpec } from './query.js';
import { byMetricThenName, num, PeriodEntries, periodFields, str } from './shape.js';

/** The metric a list ranks by (the other one rides along). */
export type RankMetric = 'pageviews' | 'visitors';

/**
 * How a ranked list asks the analysis pipeline (raw events, README "Analysis"): with `filters`,
 * always for a list without rollup SQL, and for the comparison rows of every list.
 */
export interface RankedQuestion<Item> {
  /** Grouping dimensions; the first names the row (a comparison keeps only the shown rows' values of it). */
  dimensions: readonly Dimension[];
  rankBy: RankMetric;
  /** The item of an answer row (its dimensions keyed by name, `pageviews`, `visitors`). */
  toItem: (row: AnswerRow) => Item;
  /** One row's identity, from an answer row and from an item alike: comparison rows are matched on it. */
  keyOfRow: (row: AnswerRow) => string;
  keyOfItem: (item: Item) => string;
  /** The item's value of the first dimension. */
  firstOf: (item: Item) => string;
  /** The name ties are broken by (ascending, byte order); `\u0000` joins parts so they order one after the other. */
  nameOf: (item: Item) => string;
  /**
   * Values shown as one row named `as`: the empty value (which the pipeline leaves out of a
   * grouping) and the name itself, as the rollup SQL folds them (`(direct)`, `Unknown`).
   */
  fold?: { as: string; values: readonly string[] };
  /**
   * The dimension has few values (countries): fetch them all and rank here, because the list's
   * tie order (by a name) is not the dimension value's order.
   */
  rankHere?: boolean;
}

const ANALYSIS_NOTE =
  'With `filters` the list is read from raw events (README "Analysis"). With `compare`, each row gains its pageviews and ' +
  'visitors over the compared period (zeros when it is absent there).';

/** Comparison numbers of a row: zeros when the row is absent from the compared period. */
const Comparison = v.pipe(
  v.object({ pageviews: num('Pageviews in the compared period'), visitors: num('Unique visitors in the compared period') }),
  v.description('The row over the compared period (with `compare`); zeros when it is absent there'),
);
type ComparisonNumbers = v.InferOutput<typeof Comparison>;

const metricsFor = (rankBy: RankMetric) => (rankBy === 'pageviews' ? (['pageviews', 'visitors'] as const) : (['visitors', 'pageviews'] as const));
const count = (value: string | number | null | undefined) => Number(value ?? 0);

/**
 * The top `limit` items from the pipeline: ranked by the question's metric, ties by name. A fold
 * is grouped as one row by the same query (PlanInput.fold), so the list costs one pass over the
 * period's visits.
 */
async function pipelineItems<Item>(ctx: ReportContext, q: RankedQuestion<Item>, period: ResolvedPeriod, filters: readonly Filter[], limit: number): Promise<Item[]> {
  const rows = await runQuestion(ctx.deps, ctx.project.id, period, {
    metrics: metricsFor(q.rankBy),
    dimensions: q.dimensions,
    filters,
    ...(q.fold ? { fold: q.fold } : {}),
    ...(q.rankHere ? {} : { limit }),
  });
  return topItems(q, rows.map(q.toItem), limit);
}

/** The first `limit` of `items` ranked by the question's metric, ties by name (`items` itself, perhaps a shared part, is left as it is). */
const topItems = <Item>(q: RankedQuestion<Item>, items: readonly Item[], limit: number): Item[] =>
  [...items].sort(byMetricThenName((i) => (i as Record<RankMetric, number>)[q.rankBy], q.nameOf)).slice(0, limit);

/**
 * Each shown item's numbers over the compared period: one question keeping only the shown
 * first-dimension values (so a row is never missing for lying beyond a limit), the fold grouped
 * as one row by the same query. Absent rows get zeros.
 */
async function comparisonOf<Item>(ctx: ReportContext, q: RankedQuestion<Item>, against: ResolvedPeriod, filters: readonly Filter[], items: readonly Item[]) {
  const shown = [...new Set(items.map(q.firstOf))];
  const rows = shown.length
    ? await runQuestion(ctx.deps, ctx.project.id, against, { metrics: ['pageviews', 'visitors'], dimensions: q.dimensions, filters, onlyFirst: shown, ...(q.fold ? { fold: q.fold } : {}) })
    : [];
  const found = new Map<string, ComparisonNumbers>();
  for (const r of rows) found.set(q.keyOfRow(r), { pageviews: count(r.pageviews), visitors: count(r.visitors) });
  return (item: Item): ComparisonNumbers => found.get(q.keyOfItem(item)) ?? { pageviews: 0, visitors: 0 };
}

/**
 * A top-N list report (`period`/range, `limit`, `filters`, `compare`; answer `{period, from, to,
 * data[]}`). Unfiltered, `rollup.sql` ranks and limits from rollups or raw events and
 * `rollup.toItem` shapes each row; filtered (and always without `rollup`) the pipeline answers `question`.
 * With `compare`, the answer gains `comparison: {from, to}` and each row `comparison: {pageviews, visitors}`.
 */
export function defineRankedReport<S extends RowSpec, I extends v.ObjectEntries>(opts: {
  name: string;
  path: string;
  summary: string;
  description?: string;
  /** Default `limit` (max is always 100). */
  defaultLimit?: number;
  /** The unfiltered list's SQL; without it (or `unfiltered`) every request goes through the pipeline. */
  rollup?: { sql: SourcedSql; spec: S; toItem: (row: RowOf<S>) => v.InferOutput<v.ObjectSchema<I, undefined>> };
  /** Instead of `rollup`: every item of the unfiltered list from elsewhere (a part shared with other reports), ranked and cut here. */
  unfiltered?: (ctx: ReportContext, input: AnalysisInput, period: ResolvedPeriod, source: Source) => Promise<readonly v.InferOutput<v.ObjectSchema<I, undefined>>[]>;
  question: RankedQuestion<v.InferOutput<v.ObjectSchema<I, undefined>>>;
  item: I;
  /** CSV section; `columns` default to the item's fields, headed by their names. */
  csv: { title: string; columns?: CsvColumn<v.InferOutput<v.ObjectSchema<I, undefined>>>[] };
}) {
  type Item = v.InferOutput<v.ObjectSchema<I, undefined>>;
  const response = v.object({
    ...PeriodEntries,
    comparison: v.optional(
      v.pipe(
        v.object({ from: str('Start of the compared period (ISO 8601, UTC)'), to: str('End of the compared period, the last instant counted (ISO 8601, UTC)') }),
        v.description('The compared period (with `compare`)'),
      ),
    ),
    data: v.array(v.object({ ...opts.item, comparison: v.optional(Comparison) })),
  });
  const items = async (ctx: ReportContext, input: AnalysisInput, period: ResolvedPeriod, filters: readonly Filter[], limit: number, source: Source): Promise<Item[]> => {
    if (!filters.length && opts.unfiltered) return topItems(opts.question, await opts.unfiltered(ctx, input, period, source), limit);
    if (filters.length || !opts.rollup) return pipelineItems(ctx, opts.question, period, filters, limit);
    const { sql, spec, toItem } = opts.rollup;
    const { deps, params } = await sourceRead(ctx.deps, ctx.project.id, period, source);
    const rows = await queryRowsWithDayParts(deps, sql[source], { ...params, limit }, spec);
    return rows.map(toItem);
  };
  return definePlannedReport({
    name: opts.name,
    path: opts.path,
    summary: opts.summary,
    description: [opts.description, ANALYSIS_NOTE].filter(Boolean).join(' '),
    query: rankedQuery(100, opts.defaultLimit ?? 10),
    response,
    async compute(ctx, input, source) {
      const { period, comparison: against } = await resolveInput(ctx, input);
      const filters = filtersOf(input);
      const data = await items(ctx, input, period, filters, input.limit, source);
      if (!against) return { ...periodFields(period), data } as v.InferOutput<typeof response>;
      const numbers = await comparisonOf(ctx, opts.question, against, filters, data);
      return {
        ...periodFields(period),
        comparison: rangeBounds(against),
        data: data.map((item) => ({ ...item, comparison: numbers(item) })),
      } as v.InferOutput<typeof response>;
    },
    csv: { title: opts.csv.title, columns: opts.csv.columns ?? itemColumns<Item>(Object.keys(opts.item)), rows: (r) => r.data as Item[] },
  });
}

/** One CSV column per item field, headed by the field's name. */
function itemColumns<Item>(fields: string[]): CsvColumn<Item>[] {
  return fields.map((field) => ({ header: field, value: (row) => (row as Record<string, string | number | null>)[field] }));
}
