import type { AnalysisInput } from './analysis-input.js';
import { sharedPart, sharesParts } from './answer-cache.js';
import type { ReportContext } from './definition.js';
import type { ResolvedPeriod } from './periods.js';
import type { Source } from './planner.js';
import { dailyRowsFitBuckets, queryRows, rollupParams, type RowOf, type RowSpec } from './query.js';
import { STATS_AND_SERIES_SQL } from './sql/timeseries.js';

/** Stats' headline sums of a period (avgDurationSeconds = duration_total ÷ leave_sessions), as read back from either query. */
export const STATS_TOTALS = { pageviews: 'number', visitors: 'number', sessions: 'number', duration_total: 'number', leave_sessions: 'number' } as const satisfies RowSpec;
export type StatsTotals = RowOf<typeof STATS_TOTALS>;

/** Stats' totals and the time series' points (by bucket key, as sql/timeseries.ts keys them) of one period. */
export interface StatsAndSeries {
  totals: StatsTotals;
  points: { k: string; pageviews: number; visitors: number }[];
}

/**
 * Whether stats and timeseries read the stats rollup once for both here: unfiltered questions of
 * the request's own range, both from the rollup, with daily rows that fit the buckets (the series
 * then reads exactly the rows stats reads), where parts are shared (sharesParts).
 */
export const sharesStatsAndSeries = (ctx: ReportContext, period: ResolvedPeriod, source: Source): boolean =>
  source === 'rollup' && dailyRowsFitBuckets(period) && sharesParts(ctx);

/**
 * The period's totals and points from one rollup read, a part stats and timeseries share through
 * the answer cache (one per granularity: a timeseries asked by `interval` at another one does not
 * meet stats'). Only where sharesStatsAndSeries holds, for the request's own range (`input`).
 */
export function statsAndSeries(ctx: ReportContext, period: ResolvedPeriod, input: AnalysisInput): Promise<StatsAndSeries> {
  return sharedPart(ctx, `stats-and-series:${period.granularity}`, input, async (deps) => {
    const params = rollupParams(deps, ctx.project.id, period, { daily: true });
    const rows = await queryRows(deps, STATS_AND_SERIES_SQL[period.granularity], params, { k: 'string', total: 'number', ...STATS_TOTALS });
    const total = rows.find((r) => r.total === 1);
    const sums = Object.keys(STATS_TOTALS) as (keyof StatsTotals)[];
    return {
      totals: Object.fromEntries(sums.map((name) => [name, total?.[name] ?? 0])) as StatsTotals,
      points: rows.filter((r) => r.total === 0).map(({ k, pageviews, visitors }) => ({ k, pageviews, visitors })),
    };
  });
}
