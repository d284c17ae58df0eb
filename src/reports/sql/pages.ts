import type { SourcedSql } from '../planner.js';
import { periodRollupRows, preRanked, RAW_WINDOW } from './window.js';

/**
 * Top paths by pageviews. The rollup ranks on summed pageviews first and merges the
 * unique-visitor states of the top `limit` paths only (preRanked).
 */
export const PAGES_SQL: SourcedSql = {
  rollup: `
SELECT path, sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors
FROM ${periodRollupRows('pages')}
${preRanked('path', 'pages')}
GROUP BY path
ORDER BY pageviews DESC, path ASC
LIMIT {limit:UInt32}`,
  raw: `
SELECT path, count() AS pageviews, uniqCombined(14)(visitor_id) AS visitors
FROM events
WHERE ${RAW_WINDOW} AND kind = 'pageview'
GROUP BY path
ORDER BY pageviews DESC, path ASC
LIMIT {limit:UInt32}`,
};
