/**
 * Period filters, written once. Rollup buckets are 15-minute starts and period bounds sit on
 * 15-minute edges, so `bucket` in [from, to) selects exactly the events with `ts` in [from, to).
 * Only the bots report, whose rollup has no daily twin, reads this window directly.
 */
export const ROLLUP_WINDOW = "project_id = {projectId:String} AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}";
/**
 * The same window over raw events. The bounds are bound as DateTime64 like `ts`: compared as
 * DateTime, the embedded engine's key analysis (key `toDate(ts)`) wrongly skips granules whose
 * rows all fall on the UTC date of `to`, dropping e.g. 00:00–02:30Z of a St_Johns day.
 */
export const RAW_WINDOW = "project_id = {projectId:String} AND ts >= {from:DateTime64(3, 'UTC')} AND ts < {to:DateTime64(3, 'UTC')}";

/** Rollups kept twice, as `{family}_15m` and `{family}_1d` with the same columns (migrations 0003–0009, 0011–0017). */
export type RollupFamily = 'stats' | 'pages' | 'referrers' | 'countries' | 'cities' | 'tech' | 'custom_events';

// [dayFrom, dayTo) holds the whole UTC days of the period (query.ts periodParams binds them; equal when none).
const WHOLE_DAYS = "project_id = {projectId:String} AND bucket >= {dayFrom:DateTime('UTC')} AND bucket < {dayTo:DateTime('UTC')}";
const EDGES =
  "project_id = {projectId:String} AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dayFrom:DateTime('UTC')}) OR (bucket >= {dayTo:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))";

/**
 * The rollup rows of [from, to) as a subquery to select FROM: whole UTC days from the daily
 * table, the partial days at either edge from the 15-minute one. Merging a few dozen daily
 * states instead of thousands of 15-minute ones is what keeps 30d/90d reports fast; both tables
 * hold `uniqCombined(14)` states, so they merge into one answer.
 */
export const rollupRows = (family: RollupFamily) =>
  `(SELECT * FROM ${family}_1d WHERE ${WHOLE_DAYS} UNION ALL SELECT * FROM ${family}_15m WHERE ${EDGES})`;
