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
 * - events: custom and transaction events are ~4 % of rows and sit contiguously in the raw sort
 *   key (project, day, kind), so scanning them beats merging per-name states up to a month
 *   (7d: raw 9.3 ms vs rollup 14.3 ms; 30d: 14.6 vs 17.1; 90d: 28.0 vs 24.8, rollup kept).
 */
const RAW_FASTER: Readonly<Partial<Record<string, readonly PeriodKey[]>>> = {
  events: ['24h', 'today', '7d', 'this_week', '30d', 'this_month'],
};

/** Picks the source for one request of `report` over `period`. */
export function planSource(report: string, period: PeriodKey): Source {
  return RAW_FASTER[report]?.includes(period) ? 'raw' : 'rollup';
}
