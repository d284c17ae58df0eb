import type { SourcedSql } from '../planner.js';
import { periodRollupRows, RAW_WINDOW } from './window.js';

/**
 * Cities with known geo, ranked by unique visitors (so every city's states are merged). Grouped
 * by the LowCardinality columns themselves (their dictionary keys hash faster than strings).
 */
export const CITIES_SQL: SourcedSql = {
  rollup: `
SELECT toString(city) AS city_name, toString(country_name) AS country, toString(country_code) AS code,
       uniqCombinedMerge(14)(visitors) AS visitors, sum(pageviews) AS pageviews
FROM ${periodRollupRows('cities')}
GROUP BY city, country_name, country_code
ORDER BY visitors DESC, city_name ASC, code ASC
LIMIT {limit:UInt32}`,
  raw: `
SELECT toString(city) AS city_name, toString(country_name) AS country, toString(country_code) AS code,
       uniqCombined(14)(visitor_id) AS visitors, count() AS pageviews
FROM events
WHERE ${RAW_WINDOW} AND kind = 'pageview' AND city != ''
GROUP BY city, country_name, country_code
ORDER BY visitors DESC, city_name ASC, code ASC
LIMIT {limit:UInt32}`,
};
