import * as v from 'valibot';
import { bucketKeys } from '../buckets.js';
import { definePlannedReport } from '../planned.js';
import { reportQuery } from '../params.js';
import { dailyRowsFitBuckets, queryRows, sourceParams } from '../query.js';
import { num, PeriodEntries, periodFields, resolveFor, str } from '../shape.js';
import { TIMESERIES_SQL } from '../sql/timeseries.js';

const Point = v.object({
  date: str('Bucket start (ISO 8601, UTC): local midnight, or the clock-hour start for 24h (the first bucket may start before `from`)'),
  pageviews: num('Pageviews in the bucket'),
  visitors: num('Unique visitors in the bucket'),
});
/** Answer of `timeseries`: one point per bucket of the period. */
export const TimeseriesResponse = v.object({
  ...PeriodEntries,
  granularity: v.pipe(v.picklist(['hour', 'day', 'month']), v.description('hour for 24h, day otherwise')),
  data: v.array(Point),
});
type Timeseries = v.InferOutput<typeof TimeseriesResponse>;

/** GET /:domain/timeseries — pageviews and visitors per hour (24h) or day, zero-filled. */
export const timeseriesReport = definePlannedReport({
  name: 'timeseries',
  path: '/:domain/timeseries',
  summary: 'Pageviews and visitors over time (hourly for 24h, daily otherwise; zero-filled)',
  description:
    'Day buckets follow the project time zone (UTC for this_month and this_week); every bucket of the period up to the one ' +
    'holding now is present, none after it. 24h covers exactly the last 24 hours in clock-hour buckets of the project zone: ' +
    '25 when now is not on the hour (the first and last partial), 24 when it is.',
  query: reportQuery(),
  response: TimeseriesResponse,
  async compute(ctx, input, source): Promise<Timeseries> {
    const period = resolveFor(ctx, input.period);
    const params = await sourceParams(ctx.deps, ctx.project.id, period, source, { daily: dailyRowsFitBuckets(period) });
    const rows = await queryRows(ctx.deps, TIMESERIES_SQL[period.granularity][source], params, {
      k: 'string',
      pageviews: 'number',
      visitors: 'number',
    });
    const byKey = new Map(rows.map((r) => [r.k, r]));
    const keys = bucketKeys(period);
    return {
      ...periodFields(period),
      granularity: period.granularity,
      data: period.buckets.map((start, i) => {
        const r = byKey.get(keys[i]!);
        return { date: new Date(start).toISOString(), pageviews: r?.pageviews ?? 0, visitors: r?.visitors ?? 0 };
      }),
    };
  },
  csv: {
    title: 'timeseries',
    columns: [
      { header: 'date', value: (p: v.InferOutput<typeof Point>) => p.date },
      { header: 'pageviews', value: (p) => p.pageviews },
      { header: 'visitors', value: (p) => p.visitors },
    ],
    rows: (r: Timeseries) => r.data,
  },
});
