import * as v from 'valibot';
import { rangeBounds } from '../project-range.js';
import { bucketKeys } from '../buckets.js';
import type { Filter } from '../../analysis/question.js';
import { runQuestion } from '../../analysis/run.js';
import { filtersOf, resolveInput, seriesQuery } from '../analysis-input.js';
import type { ReportContext } from '../definition.js';
import { definePlannedReport } from '../planned.js';
import type { ResolvedPeriod } from '../periods.js';
import type { Source } from '../planner.js';
import { dailyRowsFitBuckets, queryRows, sourceParams } from '../query.js';
import { num, PeriodEntries, periodFields, str } from '../shape.js';
import { TIMESERIES_SQL } from '../sql/timeseries.js';
import { sharesStatsAndSeries, statsAndSeries } from '../stats-series.js';
import type { AnalysisInput } from '../analysis-input.js';

const Point = v.object({
  date: str('Bucket start (ISO 8601, UTC): local midnight or the 1st of the month, or the clock-hour start for hours (the first bucket may start before `from`)'),
  pageviews: num('Pageviews in the bucket'),
  visitors: num('Unique visitors in the bucket'),
});
type SeriesPoint = v.InferOutput<typeof Point>;
/** Answer of `timeseries`: one point per bucket of the period. */
export const TimeseriesResponse = v.object({
  ...PeriodEntries,
  granularity: v.pipe(v.picklist(['hour', 'day', 'month']), v.description('The bucket unit: `interval` when given, else hour for 24h and day otherwise')),
  data: v.array(Point),
  comparison: v.optional(
    v.pipe(
      v.object({
        from: str('Start of the compared period (ISO 8601, UTC)'),
        to: str('End of the compared period, the last instant counted (ISO 8601, UTC)'),
        data: v.array(Point),
      }),
      v.description('The compared period (with `compare`), with as many buckets as `data`: point i of both is bucket i of its period'),
    ),
  ),
});
type Timeseries = v.InferOutput<typeof TimeseriesResponse>;

const TIME_DIMENSION = { hour: 'time:hour', day: 'time:day', month: 'time:month' } as const;

/**
 * Pageviews and visitors per bucket of `period`, zero-filled. Unfiltered from the rollup (or
 * raw) series query (a read stats shares when `input` names the request's own period:
 * stats-series.ts), keyed as bucketKeys says; filtered from one pipeline question by the time
 * dimension of the granularity, whose keys are the hour start instant, the local date, or the
 * month's first date.
 */
async function series(ctx: ReportContext, period: ResolvedPeriod, filters: readonly Filter[], source: Source, input?: AnalysisInput): Promise<SeriesPoint[]> {
  const byKey = new Map<string, { pageviews: number; visitors: number }>();
  let keys: string[];
  if (filters.length) {
    const rows = await runQuestion(ctx.deps, ctx.project.id, period, {
      metrics: ['pageviews', 'visitors'],
      dimensions: [TIME_DIMENSION[period.granularity]],
      filters,
    });
    for (const r of rows) byKey.set(String(r[TIME_DIMENSION[period.granularity]]), { pageviews: Number(r.pageviews ?? 0), visitors: Number(r.visitors ?? 0) });
    keys =
      period.granularity === 'hour'
        ? period.buckets.map((start) => new Date(start).toISOString())
        : bucketKeys(period).map((k) => (period.granularity === 'month' ? `${k}-01` : k));
  } else {
    const rows =
      input && sharesStatsAndSeries(ctx, period, source)
        ? (await statsAndSeries(ctx, period, input)).points
        : await queryRows(ctx.deps, TIMESERIES_SQL[period.granularity][source], sourceParams(ctx.deps, ctx.project.id, period, source, { daily: dailyRowsFitBuckets(period) }), {
            k: 'string',
            pageviews: 'number',
            visitors: 'number',
          });
    for (const r of rows) byKey.set(r.k, r);
    keys = bucketKeys(period);
  }
  return period.buckets.map((start, i) => {
    const r = byKey.get(keys[i]!);
    return { date: new Date(start).toISOString(), pageviews: r?.pageviews ?? 0, visitors: r?.visitors ?? 0 };
  });
}

/** GET /:domain/timeseries — pageviews and visitors per hour, day or month, zero-filled. */
export const timeseriesReport = definePlannedReport({
  name: 'timeseries',
  path: '/:domain/timeseries',
  summary: 'Pageviews and visitors over time (hourly for 24h, daily otherwise, or as `interval` says; zero-filled)',
  description:
    'Day buckets follow the project time zone (UTC for this_month and this_week); every bucket of the period up to the one ' +
    'holding now is present, none after it. 24h covers exactly the last 24 hours in clock-hour buckets of the project zone: ' +
    '25 when now is not on the hour (the first and last partial), 24 when it is. `filters` reads raw events (README "Analysis"); ' +
    '`compare` adds the compared period\'s series, bucket for bucket.',
  query: seriesQuery(),
  response: TimeseriesResponse,
  async compute(ctx, input, source): Promise<Timeseries> {
    const { period, comparison: against } = await resolveInput(ctx, input);
    const filters = filtersOf(input);
    const [data, compared] = await Promise.all([series(ctx, period, filters, source, input), against ? series(ctx, against, filters, source) : undefined]);
    return {
      ...periodFields(period),
      granularity: period.granularity,
      data,
      ...(against && compared ? { comparison: { ...rangeBounds(against), data: compared } } : {}),
    };
  },
  csv: {
    title: 'timeseries',
    columns: [
      { header: 'date', value: (p: SeriesPoint) => p.date },
      { header: 'pageviews', value: (p) => p.pageviews },
      { header: 'visitors', value: (p) => p.visitors },
    ],
    rows: (r: Timeseries) => r.data,
  },
});
