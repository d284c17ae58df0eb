import { COUNTED_KINDS } from '../../analysis/dimensions.js';
import { RAW_WINDOW } from './window.js';

/*
 * Visits by source in two parts (README "Visits of closed days"): the part of the period before
 * `cut` (the last UTC midnight) summed once into visit_source_parts (migration 0022), and the
 * sessions with events since the cut grouped whole on every read, as corrections to it.
 *
 * Binds: projectId, from, readTo (RAW_WINDOW), cut (DateTime64), partKey, fold (values read as
 * foldAs: DIRECT_FOLD).
 */

/** A visit's source, folded as the referrers report shows it. */
const FOLDED_SOURCE = 'if(v_source IN {fold:Array(String)}, {foldAs:String}, v_source)';

/**
 * Each session's counted events grouped: its source (first counted event's, as the pipeline's
 * `source` attribute), visitor, and pageviews and other counted events — in all (`v_*`) and
 * before the cut (`p_*`, when `split`).
 */
const sessions = (where: string, split: boolean) => `
SELECT session_id, any(visitor_id) AS visitor, argMin(referrer_source, ts) AS v_source,
       countIf(kind = 'pageview') AS v_pv, countIf(kind != 'pageview') AS v_ev${
         split ? `,\n       countIf(kind = 'pageview' AND ts < {cut:DateTime64(3, 'UTC')}) AS p_pv, countIf(kind != 'pageview' AND ts < {cut:DateTime64(3, 'UTC')}) AS p_ev` : ''
       }
FROM events
WHERE ${where} AND ${COUNTED_KINDS}
GROUP BY session_id`;

/** The part before the cut, summed per source, plus the marker row (empty source) that says it exists. */
export const FILL_PART_SQL = `
INSERT INTO visit_source_parts (project_id, part_key, source, pageviews, visitors, viewed, bounces)
SELECT {projectId:String}, {partKey:String}, source, pageviews, visitors, viewed, bounces
FROM (
  SELECT '' AS source, toInt64(0) AS pageviews, uniqCombinedStateIf(14)(toUInt64(0), 0) AS visitors, toInt64(0) AS viewed, toInt64(0) AS bounces
  UNION ALL
  SELECT ${FOLDED_SOURCE} AS source, toInt64(sum(v_pv)) AS pageviews, uniqCombinedState(14)(visitor) AS visitors,
         toInt64(countIf(v_pv > 0)) AS viewed, toInt64(countIf(v_pv = 1 AND v_ev = 0)) AS bounces
  FROM (${sessions("project_id = {projectId:String} AND ts >= {from:DateTime64(3, 'UTC')} AND ts < {cut:DateTime64(3, 'UTC')}", false)})
  GROUP BY source
)`;

/**
 * The stored part and the corrections of the sessions with
 * counted events since the cut: each such session's whole visit in, its part before the cut
 * out. A session's source is its first counted event's, so a session begun before the cut keeps
 * the source it has in the stored part, and its visitor is already among that source's. `cached`
 * is 1 on the stored part's rows: a read without one found no part.
 */
export const READ_PARTS_SQL = `
SELECT source, sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors,
       sum(viewed) AS viewedVisits, sum(bounces) AS bounces, max(cached) AS cached
FROM (
  SELECT source, pageviews, visitors, viewed, bounces, 1 AS cached
  FROM visit_source_parts
  WHERE project_id = {projectId:String} AND part_key = {partKey:String}
  UNION ALL
  SELECT ${FOLDED_SOURCE} AS source, toInt64(sum(v_pv) - sum(p_pv)) AS pageviews, uniqCombinedState(14)(visitor) AS visitors,
         toInt64(countIf(v_pv > 0)) - toInt64(countIf(p_pv > 0)) AS viewed,
         toInt64(countIf(v_pv = 1 AND v_ev = 0)) - toInt64(countIf(p_pv = 1 AND p_ev = 0)) AS bounces, 0 AS cached
  FROM (${sessions(
    `${RAW_WINDOW} AND session_id IN (SELECT session_id FROM events WHERE project_id = {projectId:String} AND ts >= {cut:DateTime64(3, 'UTC')} AND ts < {readTo:DateTime64(3, 'UTC')} AND ${COUNTED_KINDS})`,
    true,
  )})
  GROUP BY source
)
GROUP BY source
ORDER BY pageviews DESC, source ASC`;
