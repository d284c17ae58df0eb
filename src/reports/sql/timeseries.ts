import type { Granularity } from '../periods.js';
import type { SourcedSql } from '../planner.js';
import { RAW_WINDOW, rollupRows } from './window.js';

/*
 * Bucket keys (see buckets.ts): the hour index from the first hour bucket's start `hourBase`,
 * clamped to the last bucket (on the hour, an event stamped exactly at now belongs to the last
 * hour of `24h`), the local calendar date, or the local month (`YYYY-MM`) in the period's bucket zone. Every IANA offset is a
 * multiple of 15 minutes, so a 15-minute rollup bucket never straddles a local hour or day edge.
 * Daily rollup rows (UTC days) are read only when every day bucket is a UTC day (defs/timeseries.ts
 * binds no whole days otherwise).
 */
const hourIndex = (column: string) =>
  `toString(least(intDiv(toUnixTimestamp(${column}) - toUnixTimestamp({hourBase:DateTime('UTC')}), 3600), {lastHour:Int64}))`;
const HOUR_OF_BUCKET = hourIndex('bucket');
const DAY_OF_BUCKET = 'toString(toDate(bucket, {tz:String}))';
const HOUR_OF_TS = hourIndex('ts');
const DAY_OF_TS = 'toString(toDate(ts, {tz:String}))';
const MONTH_OF_BUCKET = "formatDateTime(toDate(bucket, {tz:String}), '%Y-%m')";
const MONTH_OF_TS = "formatDateTime(toDate(ts, {tz:String}), '%Y-%m')";

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

/**
 * Stats' totals and the series' points in one read of the stats rollup (src/reports/stats-series.ts):
 * the buckets (`total` 0) and, added up over them, the period (`total` 1).
 */
const statsAndSeries = (rollupKey: string) => `
SELECT ${rollupKey} AS k, grouping(k) AS total, sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors,
       uniqCombinedMerge(14)(sessions) AS sessions, sum(duration_ms) AS duration_total, uniqCombinedMerge(14)(leave_sessions) AS leave_sessions
FROM ${rollupRows('stats')}
GROUP BY GROUPING SETS ((k), ())`;

/** statsAndSeries by granularity. */
export const STATS_AND_SERIES_SQL: Readonly<Record<Granularity, string>> = {
  hour: statsAndSeries(HOUR_OF_BUCKET),
  day: statsAndSeries(DAY_OF_BUCKET),
  month: statsAndSeries(MONTH_OF_BUCKET),
};

/** Pageviews and visitors per bucket key, by granularity. */
export const TIMESERIES_SQL: Readonly<Record<Granularity, SourcedSql>> = {
  hour: series(HOUR_OF_BUCKET, HOUR_OF_TS),
  day: series(DAY_OF_BUCKET, DAY_OF_TS),
  month: series(MONTH_OF_BUCKET, MONTH_OF_TS),
};
