import { rollupRows } from './window.js';

// Ingest writes '(direct)' for no or same-site referrer; an empty source is folded into it too.
const SOURCE = "if(referrer_source = '', '(direct)', toString(referrer_source))";

/**
 * Top referring sources by pageviews, per pageview (uniques merged for the top `limit` only).
 * Only the email reports read it now (src/notify/report-data.ts): the referrers report attributes
 * pageviews to the visit's source through the analysis pipeline.
 */
export const REFERRERS_SQL = {
  rollup: `
SELECT ${SOURCE} AS referrer, sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors
FROM ${rollupRows('referrers')}
WHERE ${SOURCE} IN (
  SELECT ${SOURCE} AS s FROM ${rollupRows('referrers')}
  GROUP BY s ORDER BY sum(pageviews) DESC, s ASC LIMIT {limit:UInt32})
GROUP BY referrer
ORDER BY pageviews DESC, referrer ASC
LIMIT {limit:UInt32}`,
} as const;
