import type { Deps } from '../deps.js';
import { toClickHouseDateTime } from '../reports/periods.js';
import { queryOne } from '../reports/query.js';

/**
 * Bounce rate and per-visit duration over raw events, with the meanings of the README's metric
 * list: a bounce is a session with exactly one pageview and no custom or transaction event,
 * over the sessions with a pageview; visit duration is the sum of a session's leave durations,
 * averaged over the sessions with at least one leave event. Only events inside [from, to) count
 * (a session that spans the boundary is cut there).
 *
 * The report registry has neither metric yet. This one query is the email report's stand-in and
 * is meant to be replaced by the analysis pipeline (stats with bounceRate and per-visit
 * duration) once it exists.
 */
const VISIT_METRICS_SQL = `
SELECT countIf(pageviews > 0) AS visits_with_pageview,
       countIf(pageviews = 1 AND interactions = 0) AS bounces,
       countIf(leaves > 0) AS visits_with_leave,
       sumIf(duration_ms, leaves > 0) AS duration_total
FROM (
  SELECT session_id,
         countIf(kind = 'pageview') AS pageviews,
         countIf(kind IN ('custom', 'transaction')) AS interactions,
         countIf(kind = 'leave') AS leaves,
         sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_ms
  FROM events
  WHERE project_id = {projectId:String} AND ts >= {from:DateTime64(3, 'UTC')} AND ts < {to:DateTime64(3, 'UTC')}
    AND kind IN ('pageview', 'leave', 'custom', 'transaction')
  GROUP BY session_id
)`;

export interface VisitMetrics {
  /** Bounces ÷ sessions with a pageview (0–1), null when there is none. */
  bounceRate: number | null;
  /** Average per-visit duration in seconds, null when no session has a leave event. */
  visitDurationSeconds: number | null;
}

export async function visitMetrics(deps: Pick<Deps, 'clickhouse'>, projectId: string, from: number, to: number): Promise<VisitMetrics> {
  const row = await queryOne(deps, VISIT_METRICS_SQL, { projectId, from: toClickHouseDateTime(from), to: toClickHouseDateTime(to) }, {
    visits_with_pageview: 'number',
    bounces: 'number',
    visits_with_leave: 'number',
    duration_total: 'number',
  });
  return {
    bounceRate: row.visits_with_pageview > 0 ? row.bounces / row.visits_with_pageview : null,
    visitDurationSeconds: row.visits_with_leave > 0 ? row.duration_total / row.visits_with_leave / 1000 : null,
  };
}
