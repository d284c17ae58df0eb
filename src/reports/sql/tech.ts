import type { SourcedSql } from '../planner.js';
import { dayPartBranch, RAW_WINDOW, rollupRowsAfterDayPart } from './window.js';

/** The tech dimensions; names come from this closed list only. */
export type TechDimension = 'device' | 'browser' | 'os';

// An unrecognized device/browser/OS is reported as 'Unknown'.
const nameOf = (column: TechDimension) => `if(${column} = '', 'Unknown', toString(${column}))`;

/**
 * `measures` of the rows of `source` (with `device`, `browser` and `os` columns) per device, per browser and per OS,
 * as rows `dimension, name, …`, from one scan: GROUPING SETS merge each row's state into its device, browser and OS
 * groups, where a UNION of three queries read every state three times. In a set's rows the other two names hold the
 * column default '', which no name is (empty ones are 'Unknown').
 */
export const byTechDimension = (source: string, measures: string) => `
SELECT
    multiIf(device_name != '', 'device', browser_name != '', 'browser', 'os') AS dimension,
    multiIf(device_name != '', device_name, browser_name != '', browser_name, os_name) AS name,
    ${measures}
FROM (SELECT ${nameOf('device')} AS device_name, ${nameOf('browser')} AS browser_name, ${nameOf('os')} AS os_name, * FROM ${source})
GROUP BY GROUPING SETS ((device_name), (browser_name), (os_name))`;

/**
 * Device types, browsers and OS, unranked (the caller sorts each list). The rollup form merges the closed
 * days' part, stored per dimension (migration 0029), beside the other rows' states merged per dimension.
 */
export const DEVICES_SQL: SourcedSql = {
  rollup: `
SELECT dimension, name, uniqCombinedMerge(14)(visitors) AS visitors
FROM (${byTechDimension(rollupRowsAfterDayPart('tech'), 'uniqCombinedMergeState(14)(visitors) AS visitors')}
${dayPartBranch('tech', 'dimension, name, visitors')})
GROUP BY dimension, name`,
  raw: byTechDimension(`(SELECT device, browser, os, visitor_id FROM events WHERE ${RAW_WINDOW} AND kind = 'pageview')`, 'uniqCombined(14)(visitor_id) AS visitors'),
};

/**
 * DEVICES_SQL's raw form over the pageviews that also satisfy `kept` (a condition over `events`
 * rows, e.g. keptEventsCondition of a request's filters): for filtered requests.
 */
export const devicesRawSql = (kept: string) =>
  byTechDimension(`(SELECT device, browser, os, visitor_id FROM events WHERE ${RAW_WINDOW} AND kind = 'pageview' AND (${kept}))`, 'uniqCombined(14)(visitor_id) AS visitors');
