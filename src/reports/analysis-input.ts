import * as v from 'valibot';
import type { Filter } from '../analysis/question.js';
import type { ReportContext } from './definition.js';
import { FiltersQuery } from './filter-input.js';
import { compareParam, dateParam, intervalParam, limitParam, rangePeriodParam, withRangeChecks, type RangeFields } from './params.js';
import type { RangePeriodKey } from './periods.js';
import { resolveRanges, type Ranges } from './project-range.js';
import type { CompareMode, Interval } from './range.js';

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

/**
 * The period an input names and, when it asks for one, the period compared with it (see
 * project-range.ts), in the project's zone at the app clock's now.
 */
export const resolveInput = (ctx: ReportContext, input: AnalysisInput): Promise<Ranges> => resolveRanges(ctx.deps, ctx.project, input);
