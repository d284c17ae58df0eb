import type { Binder } from './binder.js';
import type { Dimension } from './question.js';
import { openSessionsOf, orderAlias, PART_SUMS, planSums, type PlanInput, type PlanMetric } from './plan.js';

/*
 * Questions over visits answered in two parts (README "Visits of closed hours"): the closed visits
 * of the period (sessions with no event since `openFrom`, the cut less the session idle time)
 * summed once per group of the question's dimensions into visit_parts (migrations 0022–0023), and
 * on every read the open sessions grouped whole beside them (plan.ts planSums). Binds what
 * RAW_WINDOW binds, `openFrom` and `floorlessFrom` (closed-hours.ts openParams) and `partKey`;
 * values through the question's binder.
 */

/** Most dimensions a question has (the query API's limit): one stored column each. */
const VALUE_COLUMNS = ['value', 'value1', 'value2'] as const;

/**
 * Whether parts can answer a question: any of up to three dimensions, with any filters. A visit
 * is either closed (in the part, whole) or open (read whole), so no sum or unique count is ever
 * taken out, and attributes that move with later events (the exit page) are final in the part.
 */
export function partsCanAnswer(q: Pick<PlanInput, 'dimensions'>): boolean {
  return q.dimensions.length <= VALUE_COLUMNS.length;
}

/**
 * What a part holds: the closed visits of a period ending now (planSums `closed`), read beside its
 * open ones; or every visit of a range that ended before the cut (`ended`), read alone.
 */
export type PartKind = 'closed' | 'ended';

/** A part (`closed`: `readTo` bound to openFrom), and the marker row that says the part exists. */
export function fillPartSql(q: PlanInput, binder: Binder, kind: PartKind = 'closed'): string {
  const values = VALUE_COLUMNS.map((_, i) => (i < q.dimensions.length ? `d${i}` : "''"));
  return `
INSERT INTO visit_parts (project_id, part_key, marker, ${VALUE_COLUMNS.join(', ')}, ${PART_SUMS.join(', ')})
SELECT {projectId:String}, {partKey:String}, 1, '', '', '', 0, 0, uniqCombinedStateIf(14)(toUInt64(0), 0), 0, 0, 0, 0, 0, 0
UNION ALL
SELECT {projectId:String}, {partKey:String}, 0, ${values.join(', ')}, ${PART_SUMS.map((c) => `s_${c}`).join(', ')}
FROM (${planSums(q, binder, kind)})`;
}

/** The rows of the part of `partKey`: its marker and its sums. */
const PART_OF_KEY = 'project_id = {projectId:String} AND part_key = {partKey:String}';

/** A part's rows of sums (not its marker). */
export const PART_ROWS = `${PART_OF_KEY} AND marker = 0`;

/** Whether the part of `partKey` exists (its marker row: `n` = 0 when not), and when it was stored (Unix seconds). */
export const PART_EXISTS_SQL = `SELECT count() AS n, toUnixTimestamp(min(created)) AS created FROM visit_parts WHERE ${PART_OF_KEY} AND marker = 1`;

/** Each metric over the summed parts and corrections (the same numbers as plan.ts METRIC_SQL over the visits themselves). Closed table. */
const METRIC_OVER_SUMS: Readonly<Record<PlanMetric, string>> = {
  pageviews: 'sum(s_pageviews)',
  events: 'sum(s_events)',
  visitors: 'uniqCombinedMerge(14)(s_visitors)',
  sessions: 'sum(s_sessions)',
  bounceRate: 'sum(s_bounces) / nullIf(sum(s_viewed), 0)',
  viewsPerVisit: 'sum(s_visit_pageviews) / nullIf(sum(s_viewed), 0)',
  avgDurationSeconds: 'sum(s_duration) / nullIf(sum(s_timed), 0) / 1000',
  viewedVisits: 'sum(s_viewed)',
  bounces: 'sum(s_bounces)',
  visitPageviews: 'sum(s_visit_pageviews)',
};

/**
 * Dimensions whose values run to thousands on a real site: paths, places below the country, free
 * text. Ranking a part's rows (mayReachPage) costs a read of its counts, ~5 ms, which pays only
 * when many rows are left unread: a part of a few dozen sources or countries is read whole faster.
 */
const MANY_VALUED: ReadonlySet<string> = new Set<Dimension>(['page', 'entryPage', 'exitPage', 'region', 'city', 'event', 'utmCampaign', 'utmTerm', 'utmContent']);
const manyValued = (q: Pick<PlanInput, 'dimensions'>) => q.dimensions.length > 1 || q.dimensions.some((d) => MANY_VALUED.has(d) || d.startsWith('prop:'));

/**
 * Whether a question's page is its groups with the most visitors, among many (manyValued): one
 * stored row per group (no fold), every group a candidate (no onlyFirst).
 */
export const rankedByVisitors = (q: PlanInput): boolean =>
  manyValued(q) && !q.fold && !q.onlyFirst && q.orderBy[0]?.[0] === 'visitors' && q.orderBy[0][1] === 'desc';

/**
 * The stored rows that can reach the page of a question ranked by visitors (migration 0025 keeps
 * each row's finalized count, `visitors_n`, in the sort key). Let T be the `offset + limit`-th
 * largest count among the rows the read keeps (some visits, every value non-empty): with the open
 * visits merged in, those rows count at least T. Another row counts at most its stored count
 * plus its open visitors, which are no more than the events since openFrom (openSessionsOf's eventCount;
 * none for a part of every visit). So a row below T less that bound cannot reach the page, and
 * its open visitors alone, a row of the union, count less than T too. A 4 % margin (and 16)
 * covers the estimator: uniqCombined's error is about 1 %, and an estimate of a union need not
 * equal the sum of its parts'. With fewer such rows than the page holds, every row is read.
 * A breakdown by page at 10M events, 30d: 12 of 5,000 stored rows read, 57 → 17 ms.
 */
export function mayReachPage(q: PlanInput, binder: Binder, kind: PartKind): string {
  const reach = binder.bind(q.offset + q.limit, 'UInt64');
  const kept = ['sessions > 0', ...q.dimensions.map((_, i) => `${VALUE_COLUMNS[i]} != ''`)].join(' AND ');
  const lastOnPage = `(SELECT if(count() = ${reach}, min(n), 0) FROM (SELECT visitors_n AS n FROM visit_parts WHERE ${PART_ROWS} AND ${kept} ORDER BY n DESC LIMIT ${reach}))`;
  const openVisitors = kind === 'closed' ? openSessionsOf(binder.params).eventCount : '0';
  return `visitors_n >= greatest(toInt64(intDiv(${lastOnPage} * 24, 25)) - toInt64(${openVisitors}) - 16, 0)`;
}

/**
 * The question read from its stored part and, for a part of closed visits, the open visits
 * (planSums `open`). Rows, order and page as plan.ts answers the question; `binder` holds the
 * period's parameters, `openFrom` (closed parts) and `partKey`. Sent only once the part is known
 * stored (its marker read back by an earlier statement): read while the part is missing, it would
 * answer with the open visits alone. A guard on the marker row inside the read cost every read a
 * scalar subquery (3–6 ms at 10M, 30d).
 */
export function readPartsSql(q: PlanInput, binder: Binder, kind: PartKind = 'closed'): string {
  const dims = q.dimensions.map((_, i) => i);
  const ranked = rankedByVisitors(q) ? ` AND ${mayReachPage(q, binder, kind)}` : '';
  const stored = `SELECT ${[...dims.map((i) => `${VALUE_COLUMNS[i]} AS g${i}`), ...PART_SUMS.map((c) => `${c} AS s_${c}`)].join(', ')}
FROM visit_parts WHERE ${PART_ROWS}${ranked}`;
  const grouped = dims.length > 0;
  const key = (i: number) => (i === 0 && q.fold ? `if(g0 IN ${binder.bind(q.fold.values, 'Array(String)')}, ${binder.bind(q.fold.as, 'String')}, g0) AS d0` : `g${i} AS d${i}`);
  // As the pipeline: an empty value is no row, unless a fold takes it in; a group whose visits all went elsewhere (sessions 0) is none either.
  const nonEmpty = dims.filter((i) => !(i === 0 && q.fold?.values.includes(''))).map((i) => `d${i} != ''`);
  const having = grouped ? ['sum(s_sessions) > 0', ...nonEmpty, ...(q.onlyFirst ? [`d0 IN ${binder.bind(q.onlyFirst, 'Array(String)')}`] : [])] : [];
  const orderBy = q.orderBy.length ? `ORDER BY ${q.orderBy.map(([name, dir]) => `${orderAlias(q, name)} ${dir === 'asc' ? 'ASC' : 'DESC'}`).join(', ')}` : '';
  const page = grouped ? `LIMIT ${binder.bind(q.limit, 'UInt32')} OFFSET ${binder.bind(q.offset, 'UInt32')}` : '';
  const select = [...dims.map(key), ...q.metrics.map((m) => `${METRIC_OVER_SUMS[m]} AS ${m}`)];
  // The stored rows name the union's columns; the open visits' (d0, …, s_*) follow them by position.
  return `SELECT ${select.join(', ')}
FROM (${stored}${kind === 'closed' ? `\nUNION ALL\n${planSums(q, binder, 'open')}` : ''})
${grouped ? `GROUP BY ${dims.map((i) => `d${i}`).join(', ')}` : ''}
${having.length ? `HAVING ${having.join(' AND ')}` : ''}
${orderBy}
${page}`;
}
