import type { SourcedSql } from '../planner.js';
import { RAW_WINDOW, ROLLUP_WINDOW } from './window.js';

/** Headline numbers: pageviews, unique visitors and sessions, leave count and summed duration. */
export const STATS_SQL: SourcedSql = {
  rollup: `
SELECT sum(pageviews) AS pageviews, uniqCombinedMerge(visitors) AS visitors, uniqCombinedMerge(sessions) AS sessions,
       sum(leaves) AS leave_count, sum(duration_ms) AS duration_total
FROM stats_15m
WHERE ${ROLLUP_WINDOW}`,
  raw: `
SELECT countIf(kind = 'pageview') AS pageviews, uniqCombinedIf(visitor_id, kind = 'pageview') AS visitors,
       uniqCombinedIf(session_id, kind = 'pageview') AS sessions,
       countIf(kind = 'leave') AS leave_count, sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_total
FROM events
WHERE ${RAW_WINDOW} AND kind IN ('pageview', 'leave')`,
};
