import { RAW_WINDOW } from '../reports/sql/window.js';
import type { Binder } from './binder.js';
import { isVisitDimension, visitAttributeColumns, visitChannelColumn, visitColumn } from './dimensions.js';
import type { PlanInput, PlanMetric } from './plan.js';
import type { Dimension, VisitDimension } from './question.js';

/*
 * Questions over visits answered in two parts (README "Visits of closed days"): the visits of the
 * period before `cut` (the last UTC midnight) summed once per value into visit_parts (migration
 * 0022), and on every read the sessions with events since the cut grouped whole, as corrections to
 * those sums. Binds what RAW_WINDOW binds, `cut` (DateTime64) and `partKey`; values through the
 * question's binder.
 */

/**
 * The visit dimension a question is grouped by ('' for none), when parts can answer it: no
 * filters, no comparison rows, at most one dimension, a visit attribute that a visit's first
 * events fix (its exit page moves with every later pageview). Null otherwise.
 */
export function partsDimension(q: Pick<PlanInput, 'filters' | 'dimensions' | 'onlyFirst'>): VisitDimension | '' | null {
  if (q.filters.length || q.onlyFirst || q.dimensions.length > 1) return null;
  const d: Dimension | undefined = q.dimensions[0];
  if (d === undefined) return '';
  return isVisitDimension(d) && d !== 'exitPage' ? d : null;
}

const VISIT_KINDS = "kind IN ('pageview', 'custom', 'transaction', 'leave')";
const CUSTOM = "kind IN ('custom', 'transaction')";
const BEFORE_CUT = "ts < {cut:DateTime64(3, 'UTC')}";

/**
 * Each session of `where` grouped: its value of `dimension` (`v_value`), visitor, pageviews,
 * custom events, leave durations and leaves — in all (`w_*`) and before the cut (`p_*`, when
 * `split`).
 */
function sessions(dimension: VisitDimension | '', where: string, split: boolean): string {
  const needed = new Set<VisitDimension>(dimension ? [dimension] : []);
  const counts = (prefix: string, only: string) => {
    const and = only ? ` AND ${only}` : '';
    return [
      `countIf(kind = 'pageview'${and}) AS ${prefix}_pv`,
      `countIf(${CUSTOM}${and}) AS ${prefix}_ev`,
      `sumIf(toUInt64(duration_ms), kind = 'leave'${and}) AS ${prefix}_dur`,
      `countIf(kind = 'leave'${and}) AS ${prefix}_lv`,
    ];
  };
  const grouped = `SELECT ${['session_id', 'any(visitor_id) AS visitor', ...visitAttributeColumns(needed), ...counts('w', ''), ...(split ? counts('p', BEFORE_CUT) : [])].join(', ')}
FROM events WHERE ${where} AND ${VISIT_KINDS} GROUP BY session_id`;
  const channel = visitChannelColumn(needed);
  const value = dimension ? visitColumn(dimension) : "''";
  return `SELECT *${channel ? `, ${channel}` : ''}, ${value} AS v_value FROM (${grouped})`;
}

/** A visit of `prefix`'s events: one holding a counted event (pageview, custom, transaction). */
const visit = (prefix: string) => `${prefix}_pv + ${prefix}_ev > 0`;

/** The part before the cut, summed per value, and the marker row that says the part exists. */
export function fillPartSql(dimension: VisitDimension | ''): string {
  return `
INSERT INTO visit_parts (project_id, part_key, marker, value, pageviews, events, visitors, sessions, viewed, bounces, duration, timed)
SELECT {projectId:String}, {partKey:String}, 1, '', 0, 0, uniqCombinedStateIf(14)(toUInt64(0), 0), 0, 0, 0, 0, 0
UNION ALL
SELECT {projectId:String}, {partKey:String}, 0, v_value, sum(w_pv), sum(w_ev), uniqCombinedState(14)(visitor), count(),
       countIf(w_pv > 0), countIf(w_pv = 1 AND w_ev = 0), sumIf(w_dur, w_lv > 0), countIf(w_lv > 0)
FROM (${sessions(dimension, `project_id = {projectId:String} AND ts >= {from:DateTime64(3, 'UTC')} AND ${BEFORE_CUT}`, false)})
WHERE ${visit('w')}
GROUP BY v_value`;
}

/** Whether the part of `partKey` exists (its marker row). */
export const PART_EXISTS_SQL = 'SELECT count() AS n FROM visit_parts WHERE project_id = {projectId:String} AND part_key = {partKey:String} AND marker = 1';

/** Each metric over the summed parts and corrections (the same numbers as plan.ts METRIC_SQL over the visits themselves). Closed table. */
const METRIC_OVER_SUMS: Readonly<Record<PlanMetric, string>> = {
  pageviews: 'sum(s_pageviews)',
  events: 'sum(s_events)',
  visitors: 'uniqCombinedMerge(14)(s_visitors)',
  sessions: 'sum(s_sessions)',
  bounceRate: 'sum(s_bounces) / nullIf(sum(s_viewed), 0)',
  viewsPerVisit: 'sum(s_pageviews) / nullIf(sum(s_viewed), 0)',
  avgDurationSeconds: 'sum(s_duration) / nullIf(sum(s_timed), 0) / 1000',
  viewedVisits: 'sum(s_viewed)',
  bounces: 'sum(s_bounces)',
  visitPageviews: 'sum(s_pageviews)',
};

/**
 * The question read from its stored part and the corrections of the sessions with events since
 * the cut: each such session's whole visit in, its part before the cut out. A session's value is
 * taken from its first counted event (or pageview), so a session begun before the cut keeps the
 * value it has in the part, and its visitor is already among that value's; one with no counted
 * event before the cut adds its visitor now (an entry page it lacked there went to the empty
 * value, which no answer shows). Rows, order and page as plan.ts answers the question; `binder`
 * holds the period's parameters, `cut` and `partKey`.
 */
export function readPartsSql(q: PlanInput, dimension: VisitDimension | '', binder: Binder): string {
  const stored = `SELECT value, pageviews AS s_pageviews, events AS s_events, visitors AS s_visitors, sessions AS s_sessions, viewed AS s_viewed,
       bounces AS s_bounces, duration AS s_duration, timed AS s_timed
FROM visit_parts WHERE project_id = {projectId:String} AND part_key = {partKey:String} AND marker = 0`;
  const corrections = `SELECT v_value AS value,
       toInt64(sum(w_pv)) - toInt64(sum(p_pv)) AS s_pageviews,
       toInt64(sum(w_ev)) - toInt64(sum(p_ev)) AS s_events,
       uniqCombinedStateIf(14)(visitor, ${visit('w')}) AS s_visitors,
       toInt64(countIf(${visit('w')})) - toInt64(countIf(${visit('p')})) AS s_sessions,
       toInt64(countIf(w_pv > 0)) - toInt64(countIf(p_pv > 0)) AS s_viewed,
       toInt64(countIf(w_pv = 1 AND w_ev = 0)) - toInt64(countIf(p_pv = 1 AND p_ev = 0)) AS s_bounces,
       toInt64(sumIf(w_dur, ${visit('w')} AND w_lv > 0)) - toInt64(sumIf(p_dur, ${visit('p')} AND p_lv > 0)) AS s_duration,
       toInt64(countIf(${visit('w')} AND w_lv > 0)) - toInt64(countIf(${visit('p')} AND p_lv > 0)) AS s_timed
FROM (${sessions(dimension, `${RAW_WINDOW} AND session_id IN (SELECT session_id FROM events WHERE project_id = {projectId:String} AND ts >= {cut:DateTime64(3, 'UTC')} AND ts < {readTo:DateTime64(3, 'UTC')} AND ${VISIT_KINDS})`, true)})
GROUP BY value`;
  const grouped = dimension !== '';
  const key = q.fold ? `if(value IN ${binder.bind(q.fold.values, 'Array(String)')}, ${binder.bind(q.fold.as, 'String')}, value)` : 'value';
  // As the pipeline: a visit value left empty is no row, unless a fold takes it in; a value whose visits all went elsewhere (sessions 0) is none either.
  const having = grouped ? ['sum(s_sessions) > 0', ...(q.fold?.values.includes('') ? [] : ["d0 != ''"])] : [];
  const orderBy = q.orderBy.length ? `ORDER BY ${q.orderBy.map(([name, dir]) => `${name === q.dimensions[0] ? 'd0' : name} ${dir === 'asc' ? 'ASC' : 'DESC'}`).join(', ')}` : '';
  const page = grouped ? `LIMIT ${binder.bind(q.limit, 'UInt32')} OFFSET ${binder.bind(q.offset, 'UInt32')}` : '';
  return `SELECT ${[...(grouped ? [`${key} AS d0`] : []), ...q.metrics.map((m) => `${METRIC_OVER_SUMS[m]} AS ${m}`)].join(', ')}
FROM (${stored}
UNION ALL
${corrections})
${grouped ? 'GROUP BY d0' : ''}
${having.length ? `HAVING ${having.join(' AND ')}` : ''}
${orderBy}
${page}`;
}
