import type { SourcedSql } from '../planner.js';
import { RAW_WINDOW, rollupRows } from './window.js';

/** The tech dimensions; names come from this closed list only. */
export type TechDimension = 'device' | 'browser' | 'os';

// An unrecognized device/browser/OS is reported as 'Unknown'.
const nameOf = (column: TechDimension) => `if(${column} = '', 'Unknown', toString(${column}))`;

/** Unique visitors per value of one tech column, ranked, top `limit`. */
const ranked = (column: TechDimension): SourcedSql => ({
  rollup: `
SELECT ${nameOf(column)} AS name, uniqCombinedMerge(14)(visitors) AS visitors
FROM ${rollupRows('tech')}
GROUP BY name
ORDER BY visitors DESC, name ASC
LIMIT {limit:UInt32}`,
  raw: `
SELECT ${nameOf(column)} AS name, uniqCombined(14)(visitor_id) AS visitors
FROM events
WHERE ${RAW_WINDOW} AND kind = 'pageview'
GROUP BY name
ORDER BY visitors DESC, name ASC
LIMIT {limit:UInt32}`,
});

/** Browsers by unique visitors. */
export const BROWSERS_SQL = ranked('browser');
/** Operating systems by unique visitors. */
export const OS_SQL = ranked('os');

/** Devices, browsers and OS in one round trip; `dimension` tells the rows apart. */
const allOf = (table: 'rollup' | 'raw') =>
  (['device', 'browser', 'os'] as const)
    .map((d) =>
      table === 'rollup'
        ? `SELECT '${d}' AS dimension, ${nameOf(d)} AS name, uniqCombinedMerge(14)(visitors) AS visitors FROM ${rollupRows('tech')} GROUP BY name`
        : `SELECT '${d}' AS dimension, ${nameOf(d)} AS name, uniqCombined(14)(visitor_id) AS visitors FROM events WHERE ${RAW_WINDOW} AND kind = 'pageview' GROUP BY name`,
    )
    .join('\nUNION ALL\n');

/** Device types, browsers and OS, unranked (the caller sorts each list). */
export const DEVICES_SQL: SourcedSql = { rollup: allOf('rollup'), raw: allOf('raw') };
