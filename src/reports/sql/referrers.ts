import type { SourcedSql } from '../planner.js';
import { RAW_WINDOW, rollupRows } from './window.js';

// Ingest writes '(direct)' for no or same-site referrer; an empty source is folded into it too.
const SOURCE = "if(referrer_source = '', '(direct)', toString(referrer_source))";

/** Top referring sources by pageviews (uniques merged for the top `limit` only on rollups). */
export const REFERRERS_SQL: SourcedSql = {
  rollup: `
SELECT ${SOURCE} AS referrer, sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors
FROM ${rollupRows('referrers')}
WHERE ${SOURCE} IN (
  SELECT ${SOURCE} AS s FROM ${rollupRows('referrers')}
  GROUP BY s ORDER BY sum(pageviews) DESC, s ASC LIMIT {limit:UInt32})
GROUP BY referrer
ORDER BY pageviews DESC, referrer ASC
LIMIT {limit:UInt32}`,
  raw: `
SELECT ${SOURCE} AS referrer, count() AS pageviews, uniqCombined(14)(visitor_id) AS visitors
FROM events
WHERE ${RAW_WINDOW} AND kind = 'pageview'
GROUP BY referrer
ORDER BY pageviews DESC, referrer ASC
LIMIT {limit:UInt32}`,
};
