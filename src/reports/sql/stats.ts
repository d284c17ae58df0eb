import type { SourcedSql } from '../planner.js';
import { RAW_WINDOW, rollupRows } from './window.js';

/**
 * Headline numbers: pageviews, unique visitors and sessions, summed leave duration and the
 * sessions with a leave event (avgDurationSeconds is per visit: duration ÷ those sessions).
 */
export const STATS_SQL: SourcedSql = {
  rollup: `
SELECT sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors, uniqCombinedMerge(14)(sessions) AS sessions,
       sum(duration_ms) AS duration_total, uniqCombinedMerge(14)(leave_sessions) AS leave_sessions
FROM ${rollupRows('stats')}`,
  raw: `
SELECT countIf(kind = 'pageview') AS pageviews, uniqCombinedIf(14)(visitor_id, kind = 'pageview') AS visitors,
       uniqCombinedIf(14)(session_id, kind = 'pageview') AS sessions,
       sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_total, uniqCombinedIf(14)(session_id, kind = 'leave') AS leave_sessions
FROM events
WHERE ${RAW_WINDOW} AND kind IN ('pageview', 'leave')`,
};

/** Average visit duration in seconds: summed leave durations over the sessions with a leave; null without one. */
export const avgVisitSeconds = (row: { duration_total: number; leave_sessions: number }): number | null =>
  row.leave_sessions > 0 ? row.duration_total / row.leave_sessions / 1000 : null;
