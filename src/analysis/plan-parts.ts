import { RAW_WINDOW } from '../reports/sql/window.js';
import type { Binder } from './binder.js';
import { isVisitDimension, visitAttributeColumns, visitAttributeWhere, visitChannelColumn, visitColumn } from './dimensions.js';
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
export function partsDimension(q: Pick<PlanInput, 'filters' | 'dimensions' | 'onlyFirst' | 'fold'>): VisitDimension | '' | null {
  if (q.filters.length || q.onlyFirst || q.dimensions.length > 1) return null;
  const d: Dimension | undefined = q.dimensions[0];
  if (d === undefined) return '';
  if (!isVisitDimension(d) || d === 'exitPage') return null;
  // A visit whose first pageview came after the cut leaves its visitor under the empty entry page of its part: never shown, unless folded in.
  return d === 'entryPage' && q.fold?.values.includes('') ? null : d;
}

const VISIT_KINDS = "kind IN ('pageview', 'custom', 'transaction', 'leave')";
const CUSTOM = "kind IN ('custom', 'transaction')";
const BEFORE_CUT = "ts < {cut:DateTime64(3, 'UTC')}";

/**
 * Each session of `where` grouped: its value of `dimension` (`v_value`), visitor, pageviews,
 * custom events, leave durations and leaves — in all (`w_*`) and, when `split`, before the cut
 * (`p_*`, and the value there, `p_value`: a visit's first counted event, and so its source, UTM
 * values, place and tech, is the same in its part before the cut when that part holds one; its
 * first pageview, the entry page, may come only after the cut).
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
  // Channel is derived from first counted events only (see above): its value before the cut is the visit's.
  const pastValue = !split ? [] : dimension && dimension !== 'channel' ? [`${visitAttributeWhere(dimension, BEFORE_CUT)} AS p_value`] : [];
  const grouped = `SELECT ${['session_id', 'any(visitor_id) AS visitor', ...visitAttributeColumns(needed), ...pastValue, ...counts('w', ''), ...(split ? counts('p', BEFORE_CUT) : [])].join(', ')}
FROM events WHERE ${where} AND ${VISIT_KINDS} GROUP BY session_id`;
  const channel = visitChannelColumn(needed);
  const value = dimension ? visitColumn(dimension) : "''";
  const pastAlias = split && pastValue.length === 0 ? `, v_value AS p_value` : '';
  return `SELECT *${channel ? `, ${channel}` : ''}, ${value} AS v_value${pastAlias} FROM (${grouped})`;
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
 * the cut: each such session's whole visit added under its value, its part before the cut taken
 * out under the value it had there (the same, but for an entry page that came after the cut). A
 * session begun before the cut with a counted event there keeps its value, so its visitor is
 * already among that value's: no unique count is taken out. Rows, order and page as plan.ts
 * answers the question; `binder` holds the period's parameters, `cut` and `partKey`.
 */
export function readPartsSql(q: PlanInput, dimension: VisitDimension | '', binder: Binder): string {
  const stored = `SELECT value, pageviews AS s_pageviews, events AS s_events, visitors AS s_visitors, sessions AS s_sessions, viewed AS s_viewed,
       bounces AS s_bounces, duration AS s_duration, timed AS s_timed
FROM visit_parts WHERE project_id = {projectId:String} AND part_key = {partKey:String} AND marker = 0`;
  // Each session since the cut twice: its whole visit added under its value, its part before the cut taken out under the value it had there.
  const signed = (whole: string, past: string) => `sum(if(sign = 1, toInt64(${whole}), -toInt64(${past})))`;
  const sinceCut = sessions(
    dimension,
    `${RAW_WINDOW} AND session_id IN (SELECT session_id FROM events WHERE project_id = {projectId:String} AND ts >= {cut:DateTime64(3, 'UTC')} AND ts < {readTo:DateTime64(3, 'UTC')} AND ${VISIT_KINDS})`,
    true,
  );
  const corrections = `SELECT value,
       ${signed('w_pv', 'p_pv')} AS s_pageviews,
       ${signed('w_ev', 'p_ev')} AS s_events,
       uniqCombinedStateIf(14)(visitor, sign = 1 AND ${visit('w')}) AS s_visitors,
       ${signed(visit('w'), visit('p'))} AS s_sessions,
       ${signed('w_pv > 0', 'p_pv > 0')} AS s_viewed,
       ${signed('w_pv = 1 AND w_ev = 0', 'p_pv = 1 AND p_ev = 0')} AS s_bounces,
       ${signed(`if(${visit('w')} AND w_lv > 0, w_dur, 0)`, `if(${visit('p')} AND p_lv > 0, p_dur, 0)`)} AS s_duration,
       ${signed(`${visit('w')} AND w_lv > 0`, `${visit('p')} AND p_lv > 0`)} AS s_timed
FROM (SELECT *, pair.1 AS value, pair.2 AS sign FROM (${sinceCut}) ARRAY JOIN [(v_value, 1), (p_value, -1)] AS pair)
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
