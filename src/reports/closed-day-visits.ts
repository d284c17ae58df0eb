import type { Deps } from '../deps.js';
import type { AnswerRow } from '../analysis/run.js';
import { toClickHouseDateTime, toClickHouseDateTime64, type ResolvedPeriod } from './periods.js';
import { queryJson, queryOne, rawParams, type QueryParams } from './query.js';
import { FILL_PART_SQL, FINGERPRINT_SQL, READ_PARTS_SQL } from './sql/visit-source-parts.js';

const DAY_MS = 86_400_000;
/** A period whose end lies this long before the clock ended before now (query.ts): it has no part since a cut. */
const ENDED_BEFORE_NOW_MS = 60_000;

type ReadDeps = Pick<Deps, 'clickhouse' | 'latestRow' | 'clock'>;

/**
 * The last UTC midnight, where a period ending now is cut in two (README "Visits of closed days"),
 * or null when the period has no closed day to keep: it ended before now, starts at or after
 * that midnight, or (`24h`) starts at a new instant at every request.
 */
export function closedDaysCut(deps: Pick<Deps, 'clock'>, period: ResolvedPeriod): number | null {
  const now = deps.clock.now();
  if (period.key === '24h' || period.to < now - ENDED_BEFORE_NOW_MS) return null;
  const cut = Math.floor(now / DAY_MS) * DAY_MS;
  return period.from < cut ? cut : null;
}

/**
 * Every visit source of `period` (unfiltered; `fold` as the referrers report folds them) with its
 * pageviews, visitors, viewed visits and bounces — the rows of the pipeline's pass over the
 * period's visits, for a period ending now with closed days (closedDaysCut; null otherwise).
 * The visits of the days before the cut are summed once per project, period start and day
 * (visit_source_parts), and each read groups by session only the sessions with events since the
 * cut. A part whose rows changed since it was summed (an import into those days) is summed again.
 */
export async function visitsBySourceSinceCut(
  deps: ReadDeps,
  projectId: string,
  period: ResolvedPeriod,
  fold: { as: string; values: readonly string[] },
): Promise<AnswerRow[] | null> {
  const cut = closedDaysCut(deps, period);
  if (cut === null) return null;
  const params: QueryParams = Object.assign(rawParams(deps, projectId, period), {
    cut: toClickHouseDateTime64(cut),
    cutDay: toClickHouseDateTime(cut),
    dayFrom: toClickHouseDateTime(Math.floor(period.from / DAY_MS) * DAY_MS),
    partKey: `${period.from}-${cut}`,
    fold: fold.values,
    foldAs: fold.as,
  });
  let rows = await queryJson(deps, READ_PARTS_SQL, params);
  if (!rows.some((r) => Number(r.cached) === 1)) {
    await fillPart(deps, params);
    rows = await queryJson(deps, READ_PARTS_SQL, params);
  }
  return rows
    .filter((r) => r.source !== '')
    .map((r) => {
      const pageviews = Number(r.pageviews);
      return { source: String(r.source), pageviews, visitors: Number(r.visitors), viewedVisits: Number(r.viewedVisits), bounces: Number(r.bounces), visitPageviews: pageviews };
    });
}

/**
 * Sums the part before the cut under the fingerprint of the rows it is summed from, read first:
 * a write between the two leaves a part newer than its fingerprint, which the next read finds
 * stale and sums again, never the reverse. Fills of the same part and fingerprint (two requests,
 * two processes) share a deduplication token, so the part is stored once.
 */
async function fillPart(deps: ReadDeps, params: QueryParams): Promise<void> {
  const { fingerprint } = await queryOne(deps, `SELECT ${FINGERPRINT_SQL} AS fingerprint`, params, { fingerprint: 'string' });
  await deps.clickhouse.command({
    query: FILL_PART_SQL,
    query_params: { ...params, fingerprint },
    clickhouse_settings: { insert_deduplicate: 1, insert_deduplication_token: `visit-source-parts:${String(params.projectId)}:${String(params.partKey)}:${fingerprint}` },
  });
}
