import type { PeriodKey } from './periods.js';

/** Where a report reads from: the rollups filled by materialized views (daily rows for whole UTC days, 15-minute rows for the edges; sql/window.ts), or raw events. */
export type Source = 'rollup' | 'raw';
/** Both sources, for callers (tests, the benchmark) that compare them. */
export const SOURCES: readonly Source[] = ['rollup', 'raw'];

/** One report question written twice, once per source; both give the same answer (tests prove it). */
export type SourcedSql = Readonly<Record<Source, string>>;

/**
 * Periods for which scanning raw events beat the rollups in `npm run bench:reports` (scale 1: 10M
 * events in the project, 40M in 49 others; daily + 15-minute rollups at uniqCombined(14)), per
 * report; every other report/period reads the rollups, which won everywhere else by 1.1–7×.
 * - events: custom and transaction events are ~4–10 % of rows and sit contiguously in the raw sort
 *   key (project, day, kind), so scanning them beats merging per-name states up to about a week
 *   (7d, raw vs rollup, engine only: 8.3 vs 10.5 ms at 1M import-shaped events, 13.5 vs 13.4 in
 *   bench:reports' live shape at scale 1, 8.4 vs 9.3 in its bulk shape). At 30d the rollup wins on
 *   import-shaped data, where every import leaves parts spanning all days (12.5 vs 10.5 ms at 1M,
 *   21 vs 17 at 10M, 23.6 vs 18.0 live shape; bulk shape 14.3 vs 13.8), so 30d reads the rollup;
 *   this_month (1–31 days) stays raw.
 */
const RAW_FASTER: Readonly<Partial<Record<string, readonly PeriodKey[]>>> = {
  events: ['24h', 'today', '7d', 'this_week', 'this_month'],
};

/** Picks the source for one request of `report` over `period`. */
export function planSource(report: string, period: PeriodKey): Source {
  return RAW_FASTER[report]?.includes(period) ? 'raw' : 'rollup';
}
