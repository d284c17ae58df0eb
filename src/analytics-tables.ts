/**
 * Every ClickHouse table that holds a project's analytics rows. Deleting a project and setting
 * retention walk this closed list (a table with `keepDays` keeps rows no longer than that);
 * table names never come from input.
 */
export const ANALYTICS_TABLES = [
  { name: 'events', timeColumn: 'ts' },
  { name: 'bot_hits', timeColumn: 'ts' },
  // The vitals events again, sorted for the performance report (migration 0028).
  { name: 'vitals', timeColumn: 'ts' },
  { name: 'stats_15m', timeColumn: 'bucket' },
  { name: 'pages_15m', timeColumn: 'bucket' },
  { name: 'referrers_15m', timeColumn: 'bucket' },
  { name: 'countries_15m', timeColumn: 'bucket' },
  { name: 'cities_15m', timeColumn: 'bucket' },
  { name: 'tech_15m', timeColumn: 'bucket' },
  { name: 'custom_events_15m', timeColumn: 'bucket' },
  { name: 'bots_15m', timeColumn: 'bucket' },
  { name: 'stats_1d', timeColumn: 'bucket' },
  { name: 'pages_1d', timeColumn: 'bucket' },
  { name: 'referrers_1d', timeColumn: 'bucket' },
  { name: 'countries_1d', timeColumn: 'bucket' },
  { name: 'cities_1d', timeColumn: 'bucket' },
  { name: 'tech_1d', timeColumn: 'bucket' },
  { name: 'custom_events_1d', timeColumn: 'bucket' },
  // Sums of a period's closed hours (src/analysis/closed-hours.ts), summed again each hour: kept two days at most.
  { name: 'visit_parts', timeColumn: 'created', keepDays: 2 },
  // Closed days of a period merged per value (src/reports/day-parts.ts), merged again when the version moves or a day closes.
  { name: 'pages_parts', timeColumn: 'created', keepDays: 2 },
  { name: 'countries_parts', timeColumn: 'created', keepDays: 2 },
  { name: 'cities_parts', timeColumn: 'created', keepDays: 2 },
  { name: 'tech_dimension_parts', timeColumn: 'created', keepDays: 2 },
  { name: 'custom_events_parts', timeColumn: 'created', keepDays: 2 },
] as const;

export type AnalyticsTable = (typeof ANALYTICS_TABLES)[number]['name'];
