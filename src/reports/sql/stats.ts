import type { SourcedSql } from '../planner.js';
import { RAW_WINDOW, rollupRows } from './window.js';

/** Headline numbers: pageviews, unique visitors and sessions, leave count and summed duration. */
export const STATS_SQL: SourcedSql = {
  rollup: `
SELECT sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors, uniqCombinedMerge(14)(sessions) AS sessions,
       sum(leaves) AS leave_count, sum(duration_ms) AS duration_total
FROM ${rollupRows('stats')}`,
  raw: `
SELECT countIf(kind = 'pageview') AS pageviews, uniqCombinedIf(14)(visitor_id, kind = 'pageview') AS visitors,
       uniqCombinedIf(14)(session_id, kind = 'pageview') AS sessions,
       countIf(kind = 'leave') AS leave_count, sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_total
FROM events
WHERE ${RAW_WINDOW} AND kind IN ('pageview', 'leave')`,
};
