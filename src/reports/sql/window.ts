/**
 * Period filters, written once. Rollup buckets are 15-minute starts and period bounds sit on
 * 15-minute edges, so `bucket` in [from, to) selects exactly the events with `ts` in [from, to).
 */
export const ROLLUP_WINDOW = "project_id = {projectId:String} AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}";
/**
 * The same window over raw events. The bounds are bound as DateTime64 like `ts`: compared as
 * DateTime, the embedded engine's key analysis (key `toDate(ts)`) wrongly skips granules whose
 * rows all fall on the UTC date of `to`, dropping e.g. 00:00–02:30Z of a St_Johns day.
 */
export const RAW_WINDOW = "project_id = {projectId:String} AND ts >= {from:DateTime64(3, 'UTC')} AND ts < {to:DateTime64(3, 'UTC')}";
