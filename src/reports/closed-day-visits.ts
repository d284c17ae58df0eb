import type { Deps } from '../deps.js';
import type { AnswerRow } from '../analysis/run.js';
import { toClickHouseDateTime64, type ResolvedPeriod } from './periods.js';
import { ENDED_BEFORE_NOW_MS, queryJson, rawParams, type QueryParams } from './query.js';
import { FILL_PART_SQL, READ_PARTS_SQL } from './sql/visit-source-parts.js';

const DAY_MS = 86_400_000;
/**
 * How long after a UTC midnight the cut stays at the one before: a writer whose clock is behind by
 * less stamps its last rows of the old day before the cut, or moves the closed-days version.
 */
const CLOCK_SKEW_MS = 60_000;

type ReadDeps = Pick<Deps, 'clickhouse' | 'latestRow' | 'clock' | 'dataVersions' | 'closedDays'>;

/** The project's closed-days version: the one pinned on `deps` (pinClosedDays), else read; null when unreadable or unknown. */
async function closedDaysVersion(deps: ReadDeps, projectId: string): Promise<string | null> {
  if (deps.closedDays?.projectId === projectId) return deps.closedDays.version;
  if (!deps.dataVersions) return null;
  return deps.dataVersions.closedDays(projectId).catch(() => null);
}

/**
 * `deps` with the project's closed-days version read once and pinned, when `period` has closed
 * days: reads that start together after it (a report's reads, which the embedded engine takes as
 * one statement when they wait together) then need no round trip to Redis between them. The
 * answer cache pins it for everything it computes.
 */
export async function pinClosedDays<D extends ReadDeps>(deps: D, projectId: string, period: ResolvedPeriod): Promise<D> {
  if (deps.closedDays?.projectId === projectId || closedDaysCut(deps, period) === null) return deps;
  return { ...deps, closedDays: { projectId, version: await closedDaysVersion(deps, projectId) } };
}

/**
 * The last UTC midnight (a minute late, CLOCK_SKEW_MS), where a period ending now is cut in two
 * (README "Visits of closed days"), or null when the period has no closed day to keep: it ended
 * before now, starts at or after that midnight, or (`24h`) starts at a new instant at every request.
 */
export function closedDaysCut(deps: Pick<Deps, 'clock'>, period: ResolvedPeriod): number | null {
  const now = deps.clock.now();
  if (period.key === '24h' || period.to < now - ENDED_BEFORE_NOW_MS) return null;
  const cut = Math.floor((now - CLOCK_SKEW_MS) / DAY_MS) * DAY_MS;
  return period.from < cut ? cut : null;
}

/**
 * Every visit source of `period` (unfiltered; `fold` as the referrers report folds them) with its
 * pageviews, visitors, viewed visits and bounces — the rows of the pipeline's pass over the
 * period's visits, for a period ending now with closed days (closedDaysCut; null otherwise).
 * The visits of the days before the cut are summed once per project, period start, cut and
 * closed-days version (visit_source_parts; a write that may hold rows before the cut moves the
 * version, so such a part is summed again), and each read groups by session only the sessions
 * with events since the cut. Null as well when the closed-days version cannot be read (Redis down).
 */
export async function visitsBySourceSinceCut(
  deps: ReadDeps,
  projectId: string,
  period: ResolvedPeriod,
  fold: { as: string; values: readonly string[] },
): Promise<AnswerRow[] | null> {
  const cut = closedDaysCut(deps, period);
  if (cut === null) return null;
  const version = await closedDaysVersion(deps, projectId);
  if (version === null) return null;
  const params: QueryParams = Object.assign(rawParams(deps, projectId, period), {
    cut: toClickHouseDateTime64(cut),
    partKey: `${period.from}-${cut}-${version}`,
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
 * Sums the part before the cut. The version in its key was read first: a write that lands
 * meanwhile moves the version after it is stored, so the part is either summed with its rows or
 * never read again. Fills of the same part (two requests, two processes) share a deduplication
 * token, so it is stored once.
 */
async function fillPart(deps: ReadDeps, params: QueryParams): Promise<void> {
  await deps.clickhouse.command({
    query: FILL_PART_SQL,
    query_params: params,
    clickhouse_settings: { insert_deduplicate: 1, insert_deduplication_token: `visit-source-parts:${String(params.projectId)}:${String(params.partKey)}` },
  });
}
