import type * as v from 'valibot';
import type { CsvColumn, ReportContext, ReportDefinition } from './definition.js';
import type { PeriodKey, RangePeriodKey } from './periods.js';
import { filtersOf } from './filter-input.js';
import { planSource, type Source } from './planner.js';

type PeriodInput = { period: RangePeriodKey };

/** A report answerable from either source; `compute` is what tests call to compare both. */
export type PlannedReport<Q extends v.GenericSchema = v.GenericSchema, R extends v.GenericSchema = v.GenericSchema, Row = unknown> =
  ReportDefinition<Q, R, Row> & {
    compute(ctx: ReportContext, input: v.InferOutput<Q>, source: Source): Promise<v.InferOutput<R>>;
  };

/**
 * Defines a report whose answer can come from rollups or raw events: `run` reads raw events for a
 * filtered request (the rollups keep no visit or per-event detail to filter on) and otherwise asks
 * the planner, `compute` does the work for a given source.
 */
export function definePlannedReport<Q extends v.GenericSchema, R extends v.GenericSchema, Row>(
  def: Omit<ReportDefinition<Q, R, Row>, 'run' | 'query' | 'csv'> & {
    query: Q;
    csv?: { title: string; columns: CsvColumn<Row>[]; rows: (result: v.InferOutput<R>) => Row[] };
    compute(ctx: ReportContext, input: v.InferOutput<Q> & PeriodInput, source: Source): Promise<v.InferOutput<R>>;
  },
): PlannedReport<Q, R, Row> {
  const compute = (ctx: ReportContext, input: v.InferOutput<Q>, source: Source) => def.compute(ctx, input as v.InferOutput<Q> & PeriodInput, source);
  return {
    ...def,
    compute,
    // custom and all ranges are not benchmarked presets: the planner reads rollups for them.
    run: (ctx, input) =>
      compute(ctx, input, filtersOf(input as { filters?: [] }).length > 0 ? 'raw' : planSource(def.name, (input as PeriodInput).period as PeriodKey)),
  };
}
