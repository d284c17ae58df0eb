import * as v from 'valibot';
import type { Filter } from '../analysis/question.js';
import type { Deps } from '../deps.js';
import type { ReportContext } from './definition.js';
import { FiltersQuery } from './filter-input.js';
import { compareParam, dateParam, intervalParam, limitParam, rangePeriodParam, withRangeChecks, type RangeFields } from './params.js';
import type { RangePeriodKey, ResolvedPeriod } from './periods.js';
import { queryOne } from './query.js';
import { comparePeriod, resolveRange, withInterval, type CompareMode, type Interval } from './range.js';

export { filtersOf } from './filter-input.js';

/** The range (`period`, `from`, `to`, `compare`) and `filters` (filter-input.ts) of a fixed analysis report. */
const analysisEntries = () => ({
  period: rangePeriodParam(),
  from: dateParam('from'),
  to: dateParam('to'),
  compare: compareParam(),
  ...FiltersQuery,
});

/**
 * withRangeChecks over `object`, its `entries` still readable on the result: callers that ask
 * which fields a query takes (the export's takesFilters) look there, not inside the pipe.
 */
const ranged = <S extends v.ObjectSchema<v.ObjectEntries, undefined> & v.GenericSchema<unknown, RangeFields>>(object: S) =>
  Object.assign(withRangeChecks(object), { entries: object.entries as S['entries'] });

/** Query of a fixed report with one answer (stats): range, compare, filters, with the range's cross-field rules. */
export const analysisQuery = () => ranged(v.object(analysisEntries()));

/** Query of a time series: analysisQuery plus `interval`. */
export const seriesQuery = () => ranged(v.object({ ...analysisEntries(), interval: intervalParam() }));

/** Query of a ranked list: analysisQuery plus `limit` (1 to `max`, default `fallback`). */
export const rankedQuery = (max: number, fallback: number) => ranged(v.object({ ...analysisEntries(), limit: limitParam(max, fallback) }));

/**
 * What a fixed report's `run` reads of its input. Only `period` is certain: other callers (the
 * export, scheduled reports) pass just a period key and a limit.
 */
export interface AnalysisInput {
  period: RangePeriodKey;
  from?: string | undefined;
  to?: string | undefined;
  interval?: Interval | undefined;
  compare?: CompareMode | undefined;
  filters?: readonly Filter[] | undefined;
}

/*
 * The project's first event. min(ts) over the project reads every granule of it; the key
 * (project_id, toDate(ts), …) puts the first day first, so ordering by the day and stopping at one
 * row reads the first granule only (in order), and min(ts) then reads that one day. Measured on
 * the embedded engine, 1M rows of a project in a 20M-row table: 123 granules → 1 + 7, 13 → 6 ms.
 */
const FIRST_EVENT_SQL = `
SELECT toUnixTimestamp64Milli(min(ts)) AS first_ms, count() AS n FROM events
WHERE project_id = {projectId:String} AND toDate(ts) = (
  SELECT toDate(ts) AS d FROM events WHERE project_id = {projectId:String} ORDER BY d LIMIT 1)`;

/** Epoch ms of the project's first stored event, or null before it has one. */
export async function firstEventAt(deps: Pick<Deps, 'clickhouse'>, projectId: string): Promise<number | null> {
  const row = await queryOne(deps, FIRST_EVENT_SQL, { projectId }, { first_ms: 'number', n: 'number' });
  return row.n > 0 ? row.first_ms : null;
}

/**
 * The period an input names, in the project's zone at the app clock's now: a preset, a custom
 * range, or all time (from the first event's day, the project's creation before it has one),
 * re-bucketed when an `interval` is asked for. Throws a 400 ApiError for a bad range.
 */
export async function resolveInput(ctx: ReportContext, input: AnalysisInput): Promise<ResolvedPeriod> {
  const now = ctx.deps.clock.now();
  const span =
    input.period === 'all' ? { firstEventAt: await firstEventAt(ctx.deps, ctx.project.id), createdAt: Date.parse(ctx.project.createdAt) } : undefined;
  const period = resolveRange({ period: input.period, from: input.from, to: input.to }, ctx.project.timeZone, now, span);
  return input.interval ? withInterval(period, input.interval) : period;
}

/** The period compared with `period`, when the input asks for one. */
export const comparisonPeriod = (period: ResolvedPeriod, input: AnalysisInput): ResolvedPeriod | undefined =>
  input.compare ? comparePeriod(period, input.compare) : undefined;

/** `from` and `to` of a compared period, as every answer's own are written. */
export const comparisonBounds = (p: ResolvedPeriod) => ({ from: new Date(p.from).toISOString(), to: new Date(p.now).toISOString() });
