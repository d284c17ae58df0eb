import type { PeriodKey } from './periods.js';

/** Where a report reads from: the 15-minute rollups filled by materialized views, or raw events. */
export type Source = 'rollup' | 'raw';
/** Both sources, for callers (tests, the benchmark) that compare them. */
export const SOURCES: readonly Source[] = ['rollup', 'raw'];

/** One report question written twice, once per source; both give the same answer (tests prove it). */
export type SourcedSql = Readonly<Record<Source, string>>;

/**
 * Periods for which scanning raw events beat the rollups in `npm run bench` (scale 1: 10M
 * events in the project, 40M in 49 others), per report; every other report/period reads the
 * rollups, which won everywhere else by 1.1–6.6×.
 * - events: custom and transaction events are ~4 % of rows and sit contiguously in the raw sort
 *   key (project, day, kind), so scanning them beats merging per-name HLL states up to a month
 *   (7d: raw 9.8 ms vs rollup 12.3 ms; 30d: 16.8 vs 20.1; 90d: 31.3 vs 27.2, rollup kept).
 */
const RAW_FASTER: Readonly<Partial<Record<string, readonly PeriodKey[]>>> = {
  events: ['24h', 'today', '7d', 'this_week', '30d', 'this_month'],
};

/** Picks the source for one request of `report` over `period`. */
export function planSource(report: string, period: PeriodKey): Source {
  return RAW_FASTER[report]?.includes(period) ? 'raw' : 'rollup';
}
