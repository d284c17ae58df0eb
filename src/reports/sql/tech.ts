import type { SourcedSql } from '../planner.js';
import { periodRollupRows, RAW_WINDOW } from './window.js';

/** The tech dimensions; names come from this closed list only. */
export type TechDimension = 'device' | 'browser' | 'os';

// An unrecognized device/browser/OS is reported as 'Unknown'.
const nameOf = (column: TechDimension) => `if(${column} = '', 'Unknown', toString(${column}))`;

/**
 * Devices, browsers and OS from one scan: GROUPING SETS merge each row's state into its device,
 * browser and OS groups, where a UNION of three queries read every state three times. In a set's
 * rows the other two names hold the column default '', which no name is (empty ones are 'Unknown').
 */
const allOf = (source: string, aggregate: string, column: string) => `
SELECT
    multiIf(device_name != '', 'device', browser_name != '', 'browser', 'os') AS dimension,
    multiIf(device_name != '', device_name, browser_name != '', browser_name, os_name) AS name,
    ${aggregate}(${column}) AS visitors
FROM (SELECT ${nameOf('device')} AS device_name, ${nameOf('browser')} AS browser_name, ${nameOf('os')} AS os_name, ${column} FROM ${source})
GROUP BY GROUPING SETS ((device_name), (browser_name), (os_name))`;

/** Device types, browsers and OS, unranked (the caller sorts each list). */
export const DEVICES_SQL: SourcedSql = {
  rollup: allOf(periodRollupRows('tech'), 'uniqCombinedMerge(14)', 'visitors'),
  raw: allOf(`(SELECT device, browser, os, visitor_id FROM events WHERE ${RAW_WINDOW} AND kind = 'pageview')`, 'uniqCombined(14)', 'visitor_id'),
};

/**
 * DEVICES_SQL's raw form over the pageviews that also satisfy `kept` (a condition over `events`
 * rows, e.g. keptEventsCondition of a request's filters): for filtered requests.
 */
export const devicesRawSql = (kept: string) =>
  allOf(`(SELECT device, browser, os, visitor_id FROM events WHERE ${RAW_WINDOW} AND kind = 'pageview' AND (${kept}))`, 'uniqCombined(14)', 'visitor_id');
