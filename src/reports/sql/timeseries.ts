import type { SourcedSql } from '../planner.js';
import { RAW_WINDOW, rollupRows } from './window.js';

/*
 * Bucket keys (see buckets.ts): the hour index from `from`, or the local calendar date in the
 * period's bucket zone. Every IANA offset is a multiple of 15 minutes, so a 15-minute rollup
 * bucket never straddles a local hour or day edge. Daily rollup rows (UTC days) are read only when
 * every day bucket is a UTC day (defs/timeseries.ts binds no whole days otherwise).
 */
const HOUR_OF_BUCKET = "toString(intDiv(toUnixTimestamp(bucket) - toUnixTimestamp({from:DateTime('UTC')}), 3600))";
const DAY_OF_BUCKET = 'toString(toDate(bucket, {tz:String}))';
const HOUR_OF_TS = "toString(intDiv(toUnixTimestamp(ts) - toUnixTimestamp({from:DateTime('UTC')}), 3600))";
const DAY_OF_TS = 'toString(toDate(ts, {tz:String}))';

const series = (rollupKey: string, rawKey: string): SourcedSql => ({
  rollup: `
SELECT ${rollupKey} AS k, sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors
FROM ${rollupRows('stats')}
GROUP BY k`,
  raw: `
SELECT ${rawKey} AS k, count() AS pageviews, uniqCombined(14)(visitor_id) AS visitors
FROM events
WHERE ${RAW_WINDOW} AND kind = 'pageview'
GROUP BY k`,
});

/** Pageviews and visitors per bucket key, by granularity. */
export const TIMESERIES_SQL: Readonly<Record<'hour' | 'day', SourcedSql>> = {
  hour: series(HOUR_OF_BUCKET, HOUR_OF_TS),
  day: series(DAY_OF_BUCKET, DAY_OF_TS),
};
