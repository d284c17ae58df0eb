import type { PeriodKey } from './periods.js';

/** Where a report reads from: the rollups filled by materialized views (daily rows for whole UTC days, 15-minute rows for the edges; sql/window.ts), or raw events. */
export type Source = 'rollup' | 'raw';
/** Both sources, for callers (tests, the benchmark) that compare them. */
export const SOURCES: readonly Source[] = ['rollup', 'raw'];

/** One report question written twice, once per source; both give the same answer (tests prove it). */
export type SourcedSql = Readonly<Record<Source, string>>;

/**
 * Periods for which scanning raw events beat the rollups, per report: `npm run bench:rollups` (then
 * named bench:reports; scale 1: 10M events in the project, 40M in 49 others; daily + 15-minute
 * rollups at uniqCombined(14)) over 7d, 30d and 90d first, where the rollups won everywhere else by
 * 1.1–7×, then `npm run bench:dashboard` and bench:rollups over `24h`.
 * Every other report/period reads the rollups.
 * - events: custom and transaction events are ~4–10 % of rows and sit contiguously in the raw sort
 *   key (project, day, kind), so scanning them beats merging per-name states up to about a week
 *   (7d, raw vs rollup, engine only: 8.3 vs 10.5 ms at 1M import-shaped events, 13.5 vs 13.4 in
 *   bench:reports' live shape at scale 1, 8.4 vs 9.3 in its bulk shape). At 30d the rollup wins on
 *   import-shaped data, where every import leaves parts spanning all days (12.5 vs 10.5 ms at 1M,
 *   21 vs 17 at 10M, 23.6 vs 18.0 live shape; bulk shape 14.3 vs 13.8), so 30d reads the rollup;
 *   this_month (1–31 days) stays raw.
 * - the lists and totals over `24h` (stats, timeseries, pages, countries, cities and the tech lists):
 *   it holds no whole UTC day, so the rollups answer it from up to 96 15-minute rows per key (read
 *   twice where a list ranks before it merges); one pass over the day's raw events costs less
 *   (`bench:dashboard` data, 2026-11-29, engine and request p50, rollup → raw: at 1M pages 72 →
 *   32–43 ms, countries 51 → 33, devices 51–55 → 37, stats 71 → 51–58, timeseries 47 → 28–30; at 10M (~110,000 events a day) pages 76–84 → 35–49, countries 44
 *   → 33–42, devices 50–53 → 42–47, stats 76–81 → 58–60, timeseries 43–49 → 31–36; cities within
 *   the noise either way). `7d` reads the rollup: raw was up to 2.5× slower at 10M.
 * - pages over `today` (15-minute rows too, whatever the zone): the other lists and totals were within
 *   the noise either way, pages faster raw in every zone tried (UTC, New York, Berlin, Kolkata, Tokyo,
 *   Auckland; engine p50, rollup → raw, 2026-11-29: 1M 14.5–20.1 → 9.0–12.5 ms, 10M 15.9–20.7 →
 *   11.6–17.1 ms).
 */
const RAW_FASTER: Readonly<Partial<Record<string, readonly PeriodKey[]>>> = {
  events: ['24h', 'today', '7d', 'this_week', 'this_month'],
  stats: ['24h'],
  timeseries: ['24h'],
  pages: ['24h', 'today'],
  countries: ['24h'],
  cities: ['24h'],
  devices: ['24h'],
  browsers: ['24h'],
  os: ['24h'],
};

/** Picks the source for one request of `report` over `period`. */
export function planSource(report: string, period: PeriodKey): Source {
  return RAW_FASTER[report]?.includes(period) ? 'raw' : 'rollup';
}
