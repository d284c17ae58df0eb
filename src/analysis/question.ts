/**
 * The question every analysis answer starts from (README "Analysis"): metrics × dimensions ×
 * filters × date range × comparison × order × page. Routes, presets and MCP tools build one;
 * the planner turns it into one bound-parameter query; the shaper turns rows into the answer.
 */

/** Metrics, one meaning everywhere (README "Analysis"). */
export const METRICS = ['visitors', 'sessions', 'pageviews', 'bounceRate', 'viewsPerVisit', 'avgDurationSeconds', 'events'] as const;
export type Metric = (typeof METRICS)[number];

/** Dimensions read from each event. `prop:<key>` is event-level too. */
export const EVENT_DIMENSIONS = ['page', 'hostname', 'event'] as const;
/** Dimensions of the whole visit, taken from its first event (exit page: its last pageview). */
export const VISIT_DIMENSIONS = [
  'source',
  'channel',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'utmTerm',
  'utmContent',
  'entryPage',
  'exitPage',
  'country',
  'region',
  'city',
  'browser',
  'os',
  'device',
] as const;
/** Time buckets, as dimensions of `POST query`. */
export const TIME_DIMENSIONS = ['time:hour', 'time:day', 'time:month'] as const;

export type EventDimension = (typeof EVENT_DIMENSIONS)[number] | `prop:${string}`;
export type VisitDimension = (typeof VISIT_DIMENSIONS)[number];
export type TimeDimension = (typeof TIME_DIMENSIONS)[number];
/** A dimension that filters may name. */
export type FilterDimension = EventDimension | VisitDimension;
/** A dimension a question may group by. */
export type Dimension = FilterDimension | TimeDimension;

/** Filter operators: is one of, is none of, contains (case-insensitive). */
export const FILTER_OPS = ['is', 'is_not', 'contains'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** One condition; all of a question's filters must hold. */
export interface Filter {
  op: FilterOp;
  dimension: FilterDimension;
  /** At least one. In page, entryPage and exitPage values of is / is_not, `*` matches any characters. */
  values: string[];
}

export type CompareMode = 'previous_period' | 'year_over_year';
export type OrderDirection = 'asc' | 'desc';
