import type { SourcedSql } from '../planner.js';
import { periodRollupRows, RAW_WINDOW } from './window.js';

/**
 * Top countries by pageviews, ties by name. Unknown geo (empty code) is left out: every row
 * carries an ISO 3166-1 alpha-2 code. Grouped by the LowCardinality columns themselves (their
 * dictionary keys hash faster than strings). Every country's states are merged in one read: there
 * are at most a few hundred, and ranking them first in a second read (as pages does for its
 * thousands of paths) cost more than it saved (README "Where the computed time goes").
 */
export const COUNTRIES_SQL: SourcedSql = {
  rollup: `
SELECT toString(country_name) AS country, toString(country_code) AS code, sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors
FROM ${periodRollupRows('countries')}
WHERE country_code != ''
GROUP BY country_name, country_code
ORDER BY pageviews DESC, country ASC, code ASC
LIMIT {limit:UInt32}`,
  raw: `
SELECT toString(country_name) AS country, toString(country_code) AS code, count() AS pageviews, uniqCombined(14)(visitor_id) AS visitors
FROM events
WHERE ${RAW_WINDOW} AND kind = 'pageview' AND country_code != ''
GROUP BY country_name, country_code
ORDER BY pageviews DESC, country ASC, code ASC
LIMIT {limit:UInt32}`,
};
