import { periodParams, type QueryParams } from '../reports/query.js';
import type { ResolvedPeriod } from '../reports/periods.js';
import { BEFORE_READ_TO, eventsFrom, RAW_FROM, RAW_WINDOW } from '../reports/sql/window.js';
import { Binder } from './binder.js';
import { COUNTED_KINDS, eventDimensionSql, isTimeDimension, isVisitDimension, visitAttributeColumns, visitAttributeSource, visitChannelColumn, visitColumn } from './dimensions.js';
import { channelSql } from './channels.js';
import { filterCondition, holdsForEmpty } from './filters.js';
import type { Dimension, Filter, Metric, OrderDirection, TimeDimension, VisitDimension } from './question.js';

/**
 * Sums over visits that no user asks for by name: a report that needs the period's bounce rate
 * and views per visit beside rows per source adds them up over the rows (the visits-by-source part).
 */
export const VISIT_SUMS = ['viewedVisits', 'bounces', 'visitPageviews'] as const;
/** A metric the planner computes: a question's, or one of VISIT_SUMS. */
export type PlanMetric = Metric | (typeof VISIT_SUMS)[number];

/** What the planner needs of a question: its range already resolved, its order already settled. */
export interface PlanInput {
  projectId: string;
  period: ResolvedPeriod;
  metrics: readonly PlanMetric[];
  dimensions: readonly Dimension[];
  filters: readonly Filter[];
  /** Alias order: each a metric or a dimension of the question. */
  orderBy: readonly (readonly [PlanMetric | Dimension, OrderDirection])[];
  limit: number;
  offset: number;
  /** Keep only rows whose first dimension is one of these (a comparison of ranked rows). */
  onlyFirst?: readonly string[];
  /** Group these values of the first dimension (a visit dimension) as one row named `as`; `''` among them keeps empty values in. */
  fold?: { as: string; values: readonly string[] };
  /** The period's parameters (query.ts rawParams); its exact periodParams when absent. */
  periodParams?: QueryParams;
}

/** A planned query: SQL text with `{name:Type}` placeholders and their values; each dimension's result column is `d0`, `d1`, … in question order, each metric's its name. */
export interface Plan {
  sql: string;
  params: QueryParams;
}

const PAGEVIEW = "kind = 'pageview'";
/** A LIMIT that keeps every row (an optimization barrier, see planQuestion). */
const UNLIMITED = 1e15;
const CUSTOM = "kind IN ('custom', 'transaction')";

/**
 * What a plan answers: the question's rows (`answer`), or per group of its dimensions the sums
 * that visit_parts keeps (README "Visits of closed hours"): over the **closed** visits, those of
 * sessions with no event since `openFrom` (the cut less the session idle time: no later event can
 * join them), read up to `readTo` bound to openFrom (`closed`); over the **open** ones, the
 * sessions with an event since openFrom, each whole visit once (`open`; both bind `{openFrom}`,
 * and `{openTo}` when the window of open sessions ends: openSessionsOf); or over every visit of a
 * range that ended before the cut (`ended`).
 */
export type PlanForm = 'answer' | 'closed' | 'open' | 'ended';
const OPEN_FROM = "{openFrom:DateTime64(3, 'UTC')}";
/**
 * The end of the open sessions' window when it has one (closed-hours.ts `openTo`): a compared
 * range whose end follows the clock, long closed, whose open sessions are those with an event in
 * [openFrom, openTo) rather than any since openFrom (every session since, 30 days of them).
 */
const OPEN_TO = "{openTo:DateTime64(3, 'UTC')}";
/** Events before openTo: the date bound too, as the key analysis does not derive it from `ts` (README "Bounds on `ts` alone do not skip days"). */
const BEFORE_OPEN_TO = `toDate(ts) <= toDate(${OPEN_TO}) AND ts < ${OPEN_TO}`;
const VISIT_KINDS = "kind IN ('pageview', 'custom', 'transaction', 'leave')";
/**
 * The floorless mark (data-version.ts ClosedHours), bound as `floorlessFrom`: no event of an open
 * session whose events carry no session_floor (0: an import) is older; 0 (1970) when not measured.
 */
const FLOORLESS_FROM = "{floorlessFrom:DateTime64(3, 'UTC')}";
/**
 * The parameter a read of the open visits takes its floor from when the binder holds it (a floor
 * measured before at the same version and cut): a bound value costs the statement nothing, while
 * the scalar subquery runs alone before the rest of it (the open visits at 30d, 1M events: ~30 → ~20 ms).
 */
export const MEASURED_FLOOR_PARAM = 'openFloor';
/**
 * Where a visit pass reads its events: a FROM clause with its own WHERE or PREWHERE, and a HAVING
 * over each session's events.
 */
interface EventsRead {
  from: string;
  having?: string;
}
const eventsWhere = (where: string): EventsRead => ({ from: `events WHERE ${where}` });

/** The SQL of the open sessions (PlanForm `open`) and of what tells them from the closed ones, for one kind of window. */
export interface OpenSessionsSql {
  /** The sessions of a part of closed visits: none of their events in the window. */
  closedSessions: string;
  /** The open sessions' events (the measured floor's form when the binder holds one, MEASURED_FLOOR_PARAM). */
  read: (measured: boolean) => EventsRead;
  /** How many events the window holds: no group has more open visitors (plan-parts.ts ranks stored rows with it). */
  eventCount: string;
  /**
   * The open sessions' floor measured on its own, for later reads (closed-hours.ts keeps it:
   * OpenFloors), epoch ms, never after openFrom: a session begun after the measurement may be
   * stamped before the sessions measured (writes land out of order), but its floor not before
   * openFrom (open-floors.ts).
   */
  floorSql: string;
  /**
   * The floorless mark measured now (epoch ms, as `from`): the earliest event of any session with
   * an event in the window that carries no session_floor, or openFrom when there is none. Such
   * events come only from writes that move the closed-hours version, so it holds until it moves.
   * The count before the set is a constant by the time events are read: with no such event (most
   * hours of most sites) no granule is read (at 10M events: 35 → 9 ms; 78 → 88 ms with some).
   */
  floorlessMarkSql: string;
}

function openSessionsSql(bounded: boolean): OpenSessionsSql {
  /**
   * The events that open a session: any in the window (a vitals event keeps a session going as
   * much as a pageview: every tracked event passes the session script); a period ending now has no
   * upper bound, so that the fill and every later read agree on which sessions are open.
   */
  const events = `FROM events WHERE project_id = {projectId:String} AND ${eventsFrom(OPEN_FROM)}${bounded ? ` AND ${BEFORE_OPEN_TO}` : ''}`;
  /**
   * The window's events, summed once per statement (the engine computes a scalar subquery once
   * for all its equal copies): the smallest floor among them, an event's session_floor or the
   * floorless mark for one without (openFrom itself when there are none, as `min` of no rows is 0,
   * which would send the read over the whole period for no session) and how many there are.
   */
  const summary = `(SELECT tuple(if(count() = 0, ${OPEN_FROM}, min(if(session_floor = 0, ${FLOORLESS_FROM}, toDateTime64(session_floor, 3, 'UTC')))), count()) ${events})`;
  /**
   * No event of an open session is older than its floor, so their events lie after the smallest: a
   * constant by the time the events are read, so the key analysis (eventsFrom) skips the days
   * before it instead of probing every event of the period. DateTime64, as RAW_WINDOW binds its bounds.
   */
  const floor = `tupleElement(${summary}, 1)`;
  const floorless = `${events} AND session_floor = 0`;
  /**
   * The open sessions' events: those of the period from the open floor on (below openTo too, when
   * bounded), in sessions with an event in the window, told by their own events rather than by a
   * set of the window's sessions, which read those events a second time (the open visits at 30d:
   * 21.9 → 18.7 ms at 1M events, 28.2 → 24.2 at 10M). Events after `readTo` (stored after now, or
   * after a compared range's end) keep their session open but count for nothing: their kind reads
   * as `vitals`, which no visit column counts (each one is conditional on the kind).
   */
  const read = (from: string): EventsRead => ({
    // Named once in WITH: written twice in PREWHERE (eventsFrom), the engine analysed the subquery again (~1.5 ms a read).
    from: `(WITH ${from} AS open_floor SELECT * REPLACE (if(${BEFORE_READ_TO}, kind, 'vitals') AS kind) FROM events PREWHERE ${eventsFrom('open_floor')} AND ${RAW_FROM}${bounded ? ` AND ${BEFORE_OPEN_TO}` : ''})`,
    having: `max(ts) >= ${OPEN_FROM}`,
  });
  const unmeasured = read(floor);
  const measured = read(`{${MEASURED_FLOOR_PARAM}:DateTime64(3, 'UTC')}`);
  return {
    closedSessions: `session_id NOT IN (SELECT session_id ${events})`,
    read: (isMeasured) => (isMeasured ? measured : unmeasured),
    eventCount: `tupleElement(${summary}, 2)`,
    floorSql: `SELECT toUnixTimestamp64Milli(least(${floor}, ${OPEN_FROM})) AS floor`,
    floorlessMarkSql: `SELECT toUnixTimestamp64Milli(if(count() = 0, ${OPEN_FROM}, min(ts))) AS from
FROM events WHERE project_id = {projectId:String} AND (SELECT count() ${floorless}) > 0 AND session_id IN (SELECT session_id ${floorless})`,
  };
}

const SINCE_OPEN_FROM = openSessionsSql(false);
const WITHIN_OPEN_WINDOW = openSessionsSql(true);

/** The open sessions' SQL for a read binding `params`: those with an event since openFrom, or in [openFrom, openTo) when it binds openTo. */
export const openSessionsOf = (params: QueryParams): OpenSessionsSql => (params.openTo === undefined ? SINCE_OPEN_FROM : WITHIN_OPEN_WINDOW);

/**
 * The sums kept per group (visit_parts' columns, in this order, each selected as `s_<name>`):
 * kept pageviews and custom events, a visitors state, visits, visits with a pageview, bounces, the
 * visits' own pageviews, durations and visits with a leave. Over visits: each sum's expression.
 * The closed and the open visits are different sessions, so every sum of the two adds up and the
 * visitor states merge.
 */
const PART_SUM_OVER_VISITS = {
  pageviews: 'k_pageviews',
  events: 'k_events',
  visitors: null,
  sessions: '1',
  viewed: 'v_pageviews > 0',
  bounces: 'v_pageviews = 1 AND v_events = 0',
  visit_pageviews: 'v_pageviews',
  duration: 'if(v_leaves > 0, v_duration, 0)',
  timed: 'v_leaves > 0',
} as const;
export const PART_SUMS = Object.keys(PART_SUM_OVER_VISITS) as (keyof typeof PART_SUM_OVER_VISITS)[];

/** PART_SUMS over visits, as `<prefix><name>`. */
function sumColumns(prefix = 's_'): string[] {
  return PART_SUMS.map((name) => {
    const over = PART_SUM_OVER_VISITS[name];
    return over === null ? `uniqCombinedState(14)(visitor) AS ${prefix}${name}` : `sum(toInt64(${over})) AS ${prefix}${name}`;
  });
}

/** PART_SUMS over groups of `p_` sums, as `s_<name>`. */
const mergedSumColumns = () => PART_SUMS.map((name) => (name === 'visitors' ? `uniqCombinedMergeState(14)(p_${name})` : `sum(p_${name})`) + ` AS s_${name}`);

/**
 * Each metric over rows that are one visit each (or one visit within one group of event-level
 * dimensions): `k_*` count the visit's kept events, `v_*` describe the whole visit. Closed table.
 */
const VIEWED = 'countIf(v_pageviews > 0)';
const BOUNCES = 'countIf(v_pageviews = 1 AND v_events = 0)';
const METRIC_SQL: Readonly<Record<PlanMetric, string>> = {
  pageviews: 'sum(k_pageviews)',
  events: 'sum(k_events)',
  // As the rollups count them (exact up to at least 1,000 distinct values): uniqExact cost 19–26 % more per visit pass.
  visitors: 'uniqCombined(14)(visitor)',
  sessions: 'count()',
  bounceRate: `${BOUNCES} / nullIf(${VIEWED}, 0)`,
  viewsPerVisit: `sum(v_pageviews) / nullIf(${VIEWED}, 0)`,
  avgDurationSeconds: 'sumIf(v_duration, v_leaves > 0) / nullIf(countIf(v_leaves > 0), 0) / 1000',
  viewedVisits: VIEWED,
  bounces: BOUNCES,
  visitPageviews: 'sum(v_pageviews)',
};
const VISIT_METRICS: readonly PlanMetric[] = ['bounceRate', 'viewsPerVisit', 'avgDurationSeconds', ...VISIT_SUMS];

/**
 * Each metric in two steps, for visits first grouped by the inputs of their channel: `partial`
 * sums (or unique-count states) per group, `merged` the metric over groups — the same numbers
 * as METRIC_SQL over the visits themselves.
 */
const TWO_STEP_METRIC_SQL: Readonly<Record<PlanMetric, { partial: readonly string[]; merged: string }>> = {
  pageviews: { partial: ['sum(k_pageviews) AS p_pageviews'], merged: 'sum(p_pageviews)' },
  events: { partial: ['sum(k_events) AS p_events'], merged: 'sum(p_events)' },
  visitors: { partial: ['uniqCombinedState(14)(visitor) AS p_visitors'], merged: 'uniqCombinedMerge(14)(p_visitors)' },
  sessions: { partial: ['count() AS p_sessions'], merged: 'sum(p_sessions)' },
  bounceRate: { partial: [`${BOUNCES} AS p_bounces`, `${VIEWED} AS p_viewed`], merged: 'sum(p_bounces) / nullIf(sum(p_viewed), 0)' },
  viewsPerVisit: { partial: ['sum(v_pageviews) AS p_views', `${VIEWED} AS p_viewed`], merged: 'sum(p_views) / nullIf(sum(p_viewed), 0)' },
  avgDurationSeconds: { partial: ['sumIf(v_duration, v_leaves > 0) AS p_duration', 'countIf(v_leaves > 0) AS p_timed'], merged: 'sum(p_duration) / nullIf(sum(p_timed), 0) / 1000' },
  viewedVisits: { partial: [`${VIEWED} AS p_viewed`], merged: 'sum(p_viewed)' },
  bounces: { partial: [`${BOUNCES} AS p_bounces`], merged: 'sum(p_bounces)' },
  visitPageviews: { partial: ['sum(v_pageviews) AS p_views'], merged: 'sum(p_views)' },
};
/** The visit attributes a channel is derived from (channels.ts). */
const CHANNEL_INPUTS = ['source', 'utmSource', 'utmMedium', 'utmCampaign'] as const;
/**
 * A visit's pageviews and custom/transaction events as one sum (pageviews in the low 32 bits):
 * one state per visit instead of two makes the hash table of a visit pass smaller (the ungrouped
 * pass at 10M events, 30d: 90 → 79 ms). groupedVisits unpacks it into `v_pageviews` and `v_events`.
 */
const PACKED_COUNTS = `sum(multiIf(${PAGEVIEW}, 1, ${CUSTOM}, 4294967296, 0)) AS v_counts`;
const UNPACKED_COUNTS = ['v_counts % 4294967296 AS v_pageviews', 'intDiv(v_counts, 4294967296) AS v_events'];
const VISIT_TOTALS = [PACKED_COUNTS, "sumIf(toUInt64(duration_ms), kind = 'leave') AS v_duration", "countIf(kind = 'leave') AS v_leaves"];
/** Without event-level filters every counted event is kept: the kept counts are the visit's own, not counted again. */
const ALL_KEPT = ['v_pageviews AS k_pageviews', 'v_events AS k_events', 'v_pageviews + v_events AS k_kept'];

/**
 * Bucket key of a time dimension over `ts`: the start of the zone's clock hour in epoch seconds
 * (an event stamped exactly at now, on the hour, joins the last hour, as in `24h`), the local
 * date, the local month's first day.
 */
const hourStart = (instant: string) => `toUnixTimestamp(toStartOfHour(toTimeZone(${instant}, {tz:String})))`;
const TIME_KEY: Readonly<Record<TimeDimension, string>> = {
  'time:hour': `toString(least(${hourStart('ts')}, ${hourStart("{to:DateTime64(3, 'UTC')} - toIntervalMillisecond(2)")}))`,
  'time:day': "toString(toDate(ts, {tz:String}))",
  'time:month': "formatDateTime(toStartOfMonth(toDate(ts, {tz:String})), '%Y-%m-01')",
};

/**
 * The events a visit is read from: counted kinds, and leave events only when a duration is asked
 * for (kind is in the sort key, so granules of vitals and leaves are skipped).
 */
const visitEvents = (withLeaves: boolean) => `${RAW_WINDOW} AND ${withLeaves ? VISIT_KINDS : COUNTED_KINDS}`;

/**
 * Each filter as a bound SQL condition: event-level ones over an `events` row, visit-level ones
 * over the visit columns (`v_*`), with the visit dimensions they need.
 */
function splitFilters(filters: readonly Filter[], binder: Binder) {
  const eventFilters: string[] = [];
  const visitFilters: string[] = [];
  const visitDims = new Set<VisitDimension>();
  for (const f of filters) {
    if (isVisitDimension(f.dimension)) {
      visitDims.add(f.dimension);
      visitFilters.push(filterCondition(f, visitColumn(f.dimension), binder));
    } else eventFilters.push(filterCondition(f, eventDimensionSql(f.dimension, binder), binder));
  }
  return { eventFilters, visitFilters, visitDims };
}

/**
 * A condition on session_id that every visit a question can keep meets, read from single events:
 * a visit whose attribute passes a visit-level filter holds the event (of the kinds the attribute
 * is taken from) it took the value from, passing it too — unless the filter holds for the empty
 * value, which a visit without such events has (so `source!=x` gives no condition, `utmCampaign!=`
 * does) — and, when `keptEvents` is given (questions that count only visits holding a kept
 * event), a visit holds a counted event passing the event-level filters. Grouping only those
 * sessions gives the same visits, for less: the grouping of the period's events by session is
 * most of a filtered question's cost. The sessions meeting every such condition form one set,
 * each condition's subquery reading only the sessions of the next (probing every event of the
 * period against a set costs about as much as the set saves, so it is done once). Given as a
 * list of at most one condition, to spread among others; none when no filter gives one.
 */
function candidateSessions(filters: readonly Filter[], binder: Binder, keptEvents: string | null): string[] {
  const eventConditions: string[] = [];
  for (const f of filters) {
    if (!isVisitDimension(f.dimension) || holdsForEmpty(f)) continue;
    const source = visitAttributeSource(f.dimension);
    if (source) eventConditions.push(`${source.kinds} AND ${filterCondition(f, source.column, binder)}`);
  }
  if (keptEvents !== null) eventConditions.push(`${COUNTED_KINDS} AND ${keptEvents}`);
  // PREWHERE: each subquery probes the next one's set only with the events its own condition keeps.
  const within = (condition: string, inner: string | null) =>
    `session_id IN (SELECT session_id FROM events PREWHERE ${RAW_WINDOW} AND ${condition}${inner ? ` WHERE ${inner}` : ''})`;
  const nested = eventConditions.reduceRight<string | null>((inner, condition) => within(condition, inner), null);
  return nested ? [nested] : [];
}

const and = (conditions: readonly string[]) => (conditions.length ? conditions.join(' AND ') : '1');

/**
 * Events of `read` grouped into visits with `columns`, the packed counts unpacked (when
 * `columns` has them), `derived` columns and the channel (when `needed` has it) selected over
 * them, and the visits kept where `conditions` hold.
 */
function groupedVisits(columns: readonly string[], read: EventsRead, conditions: readonly string[], needed: ReadonlySet<VisitDimension>, derived: readonly string[] = []): string {
  const grouped = `SELECT ${columns.join(', ')} FROM ${read.from} GROUP BY session_id${read.having ? ` HAVING ${read.having}` : ''}`;
  const channel = visitChannelColumn(needed);
  const over = [...(columns.includes(PACKED_COUNTS) ? UNPACKED_COUNTS : []), ...derived, ...(channel ? [channel] : [])];
  return `SELECT *${over.map((c) => `, ${c}`).join('')} FROM (${grouped}) WHERE ${and(conditions)}`;
}

/**
 * Builds the one query that answers a question from raw events (README "Analysis"):
 * - a visit is its events in the range grouped by session_id; visit-level dimensions and filters
 *   read its attributes (first counted event, entry/exit pageview), bounce rate, views per visit
 *   and duration read its totals;
 * - event-level filters keep events; pageviews/events count kept events, visitors and sessions
 *   those with a kept event, visit metrics the whole visits holding one;
 * - without event-level dimensions one pass groups by visit (no join); with them, kept events are
 *   grouped by (dimensions, visit) and joined to their visits only when a visit column is needed.
 */
export function planQuestion(q: PlanInput): Plan {
  const binder = new Binder(q.periodParams ?? periodParams(q.projectId, q.period, { daily: false }));
  return { sql: buildPlan(q, binder, 'answer'), params: binder.params };
}

/**
 * The sums of a question's groups (PlanForm `closed`, `open` or `ended`): its dimensions as `d0`,
 * `d1`, … (raw values: no fold, empty values kept) and sumColumns, unordered and unpaged, with
 * its parameters bound through `binder`.
 */
export function planSums(q: PlanInput, binder: Binder, form: Exclude<PlanForm, 'answer'>): string {
  return buildPlan(q, binder, form);
}

function buildPlan(q: PlanInput, binder: Binder, form: PlanForm): string {
  const sums = form !== 'answer';
  const open = form === 'open';
  const { eventFilters, visitFilters, visitDims } = splitFilters(q.filters, binder);
  const dimensionColumns = q.dimensions.map((_, i) => `d${i}`);
  const eventDims: { column: string; sql: string }[] = [];
  const groupedVisitDims: { column: string; dim: VisitDimension }[] = [];
  q.dimensions.forEach((d, i) => {
    const column = dimensionColumns[i]!;
    if (isVisitDimension(d)) {
      visitDims.add(d);
      groupedVisitDims.push({ column, dim: d });
    } else if (isTimeDimension(d)) eventDims.push({ column, sql: TIME_KEY[d] });
    else eventDims.push({ column, sql: eventDimensionSql(d, binder) });
  });
  if (q.fold && !groupedVisitDims.some((g) => g.column === 'd0')) throw new Error('a fold groups the first dimension, which must be a visit dimension');
  // One grouping key for the folded values, so their visitors are counted once across them (unique counts do not add up).
  const groupKey = (g: { column: string; dim: VisitDimension }) =>
    q.fold && !sums && g.column === 'd0'
      ? `if(${visitColumn(g.dim)} IN ${binder.bind(q.fold.values, 'Array(String)')}, ${binder.bind(q.fold.as, 'String')}, ${visitColumn(g.dim)})`
      : visitColumn(g.dim);
  // A row with an empty value (unknown country, no UTM, no such property) is left out of a grouping by it, unless a fold takes it in; sums keep it (their reader decides).
  const nonEmptyVisitDims = sums ? [] : groupedVisitDims.filter((g) => !(q.fold?.values.includes('') && g.column === 'd0')).map((g) => `${visitColumn(g.dim)} != ''`);
  const metrics = sums ? sumColumns() : q.metrics.map((m) => `${METRIC_SQL[m]} AS ${m}`);
  const needsVisitTotals = sums || q.metrics.some((m) => VISIT_METRICS.includes(m));
  // Visits come only from sessions that can pass the filters (every branch below keeps only visits holding a kept event);
  // open sums read only the open sessions, fewer than any filter leaves: the events from their floor on (openSessionsOf; the measured floor when the binder holds one).
  const openSessions = openSessionsOf(binder.params);
  const read = open
    ? openSessions.read(binder.params[MEASURED_FLOOR_PARAM] !== undefined)
    : eventsWhere(
        and([
          visitEvents(sums || q.metrics.includes('avgDurationSeconds')),
          ...candidateSessions(q.filters, binder, eventFilters.length ? and(eventFilters) : null),
          ...(form === 'closed' ? [openSessions.closedSessions] : []),
        ]),
      );
  const attributes = visitAttributeColumns(visitDims);
  // In question order: parts (plan-parts.ts) read the sums' dimensions by position.
  const dimensionSelect = dimensionColumns.map((column) => {
    const g = groupedVisitDims.find((v) => v.column === column);
    return g ? `${groupKey(g)} AS ${column}` : column;
  });
  const outer = (from: string, select = [...dimensionSelect, ...metrics], having: string[] = []) => {
    const groupBy = dimensionColumns.length ? `GROUP BY ${dimensionColumns.join(', ')}` : '';
    if (sums) return `SELECT ${select.join(', ')}\nFROM (${from})\n${groupBy}`;
    const conditions = [...having, ...(q.onlyFirst ? [`d0 IN ${binder.bind(q.onlyFirst, 'Array(String)')}`] : [])];
    const orderBy = q.orderBy.length ? `ORDER BY ${q.orderBy.map(([name, dir]) => `${orderAlias(q, name)} ${dir === 'asc' ? 'ASC' : 'DESC'}`).join(', ')}` : '';
    const page = dimensionColumns.length ? `LIMIT ${binder.bind(q.limit, 'UInt32')} OFFSET ${binder.bind(q.offset, 'UInt32')}` : '';
    return `SELECT ${select.join(', ')}\nFROM (${from})\n${groupBy}\n${conditions.length ? `HAVING ${and(conditions)}` : ''}\n${orderBy}\n${page}`;
  };

  if (eventDims.length === 0) {
    const kept = and(eventFilters);
    const keptCounts = eventFilters.length
      ? [`countIf(${PAGEVIEW} AND ${kept}) AS k_pageviews`, `countIf(${CUSTOM} AND ${kept}) AS k_events`, `countIf(${COUNTED_KINDS} AND ${kept}) AS k_kept`]
      : [];
    const keptDerived = eventFilters.length ? [] : ALL_KEPT;
    const perVisit = ['session_id', ...(sums || q.metrics.includes('visitors') ? ['any(visitor_id) AS visitor'] : []), ...attributes, ...VISIT_TOTALS, ...keptCounts];
    const byChannel = groupedVisitDims.some((g) => g.dim === 'channel') && !q.filters.some((f) => f.dimension === 'channel') && !q.fold;
    if (!byChannel) return outer(groupedVisits(perVisit, read, ['k_kept > 0', ...visitFilters, ...nonEmptyVisitDims], visitDims, keptDerived));
    // Grouped by channel: the visits are grouped by the channel's inputs (and the other
    // dimensions) first, and the channel rules run once per group instead of once per visit
    // (breakdown by channel, 1M events, 30d: 194 → 64 ms). The LIMIT keeps the engine from moving
    // the rules back below that grouping, where they would run per visit again.
    const otherDims = groupedVisitDims.filter((g) => g.dim !== 'channel');
    const [source, utmSource, utmMedium, utmCampaign] = CHANNEL_INPUTS.map((d) => visitColumn(d)) as [string, string, string, string];
    const keys = [...otherDims.map((g) => g.column), source, utmSource, utmMedium, utmCampaign];
    const partial = sums ? sumColumns('p_') : [...new Set(q.metrics.flatMap((m) => TWO_STEP_METRIC_SQL[m].partial))];
    const visits = groupedVisits(
      perVisit,
      read,
      ['k_kept > 0', ...visitFilters, ...(sums ? [] : otherDims.map((g) => `${visitColumn(g.dim)} != ''`))],
      new Set([...visitDims].filter((d) => d !== 'channel')),
      keptDerived,
    );
    const groupSelect = [...otherDims.map((g) => `${visitColumn(g.dim)} AS ${g.column}`), source, utmSource, utmMedium, utmCampaign, ...partial];
    const groups = `SELECT ${groupSelect.join(', ')} FROM (${visits}) GROUP BY ${keys.join(', ')} LIMIT ${binder.bind(UNLIMITED, 'UInt64')}`;
    const channel = channelSql(source, utmSource, utmMedium, utmCampaign);
    const merged = sums ? mergedSumColumns() : q.metrics.map((m) => `${TWO_STEP_METRIC_SQL[m].merged} AS ${m}`);
    const select = [...groupedVisitDims.map((g) => (g.dim === 'channel' ? `${channel} AS ${g.column}` : g.column)), ...merged];
    const channelColumn = groupedVisitDims.find((g) => g.dim === 'channel')!.column;
    return outer(groups, select, [`${channelColumn} != ''`]);
  }

  if (open) return outer(keptPerVisitOnce(eventDims, groupedVisitDims, ['session_id', 'any(visitor_id) AS visitor', ...attributes, ...VISIT_TOTALS], read, visitFilters, visitDims, and(eventFilters)));
  const needsVisitColumns = groupedVisitDims.length > 0 || needsVisitTotals;
  const visits = groupedVisits(['session_id', ...attributes, ...VISIT_TOTALS], read, [...visitFilters, ...nonEmptyVisitDims], visitDims);
  // Explicit PREWHERE: the row's own conditions first, so a visits-set probe only sees the events they keep (filtered pages at 10M events, 30d: 304 → 270 ms).
  const keptPrewhere = [RAW_WINDOW, COUNTED_KINDS, ...eventFilters];
  const keptWhere = sums ? [] : eventDims.map((e) => `${e.column} != ''`);
  if (!needsVisitColumns && visitFilters.length) keptWhere.push(`session_id IN (SELECT session_id FROM (${visits}))`);
  const keptPerVisit = `SELECT ${[
    ...eventDims.map((e) => `${e.sql} AS ${e.column}`),
    'session_id',
    'any(visitor_id) AS visitor',
    `countIf(${PAGEVIEW}) AS k_pageviews`,
    `countIf(${CUSTOM}) AS k_events`,
  ].join(', ')} FROM events PREWHERE ${and(keptPrewhere)} WHERE ${and(keptWhere)} GROUP BY ${[...eventDims.map((e) => e.column), 'session_id'].join(', ')}`;
  const from = needsVisitColumns ? `SELECT * FROM (${keptPerVisit}) AS k INNER JOIN (${visits}) AS v USING (session_id)` : keptPerVisit;
  return outer(from);
}

/**
 * The open sums' rows for event-level dimensions, one per group of values and session, read in
 * one pass over the open sessions' events: each visit keeps the dimension values and kinds of its
 * kept events in an array, unrolled after the visit filters. Two passes (kept events joined to
 * visits, as the whole pass does) probed the period's events against the sessions twice (the
 * since-cut sums of filtered pages at 10M events, 30d: 142 → 76 ms).
 */
function keptPerVisitOnce(
  eventDims: readonly { column: string; sql: string }[],
  groupedVisitDims: readonly { column: string; dim: VisitDimension }[],
  perVisit: readonly string[],
  read: EventsRead,
  visitFilters: readonly string[],
  visitDims: ReadonlySet<VisitDimension>,
  kept: string,
): string {
  const values = eventDims.map((e) => e.sql);
  const keptEvents = `groupArrayIf(tuple(${[...values, PAGEVIEW, CUSTOM].join(', ')}), ${COUNTED_KINDS} AND ${kept}) AS kept`;
  const visits = groupedVisits([...perVisit, keptEvents], read, visitFilters, visitDims);
  const at = (i: number) => `kept_event.${i + 1}`;
  const keys = [...eventDims.map((e) => e.column), ...groupedVisitDims.map((g) => visitColumn(g.dim)), 'session_id'];
  const columns = [
    ...eventDims.map((e, i) => `${at(i)} AS ${e.column}`),
    ...groupedVisitDims.map((g) => visitColumn(g.dim)),
    'session_id',
    'any(visitor) AS visitor',
    `sum(${at(values.length)}) AS k_pageviews`,
    `sum(${at(values.length + 1)}) AS k_events`,
    ...['v_pageviews', 'v_events', 'v_duration', 'v_leaves'].map((c) => `any(${c}) AS ${c}`),
  ];
  return `SELECT ${columns.join(', ')} FROM (${visits}) ARRAY JOIN kept AS kept_event GROUP BY ${keys.join(', ')}`;
}

/**
 * A condition over `events` rows that keeps the events a question's filters keep, for reports
 * that read raw events with their own SQL: event-level filters on the row itself, visit-level
 * ones through the visits (sessions in `[from, to)`) whose attributes match. Visits are read from
 * every kind here: a visit of only vitals or leave events (attributes empty) keeps its events
 * under a negative filter such as `country!=US`, as the performance report expects. Binds `from`/`to`
 * and `projectId` as RAW_WINDOW does; '1' without filters.
 */
export function keptEventsCondition(filters: readonly Filter[], binder: Binder): string {
  const { eventFilters: conditions, visitFilters, visitDims } = splitFilters(filters, binder);
  if (visitFilters.length) {
    const where = and([RAW_WINDOW, ...candidateSessions(filters, binder, null)]);
    conditions.push(`session_id IN (SELECT session_id FROM (${groupedVisits(['session_id', ...visitAttributeColumns(visitDims)], eventsWhere(where), visitFilters, visitDims)}))`);
  }
  return and(conditions);
}

/** The result column an order entry names: a metric's own alias, or its dimension's `dN`. */
export function orderAlias(q: PlanInput, name: PlanMetric | Dimension): string {
  const i = q.dimensions.indexOf(name as Dimension);
  if (i >= 0) return `d${i}`;
  if ((q.metrics as readonly string[]).includes(name)) return name;
  throw new Error(`order by names neither a metric nor a dimension of the question: ${name}`);
}
