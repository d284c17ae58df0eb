/*
 * Period filters, written once. A period is [from, to) with `to` = now + 1 ms (periods.ts), so its
 * edges are rarely on the 15-minute steps of the rollups. query.ts periodParams binds:
 * - `from`/`to` (DateTime64(3)): the exact bounds, for raw events;
 * - `rollupFrom`/`rollupTo`: the 15-minute edges just inside them; rollup rows cover
 *   [rollupFrom, rollupTo), raw events the sub-15-minute slices [from, rollupFrom) and
 *   [rollupTo, to) (the start of `24h`, the current quarter hour);
 * - `dayFrom`/`dayTo`: the whole UTC days inside [rollupFrom, rollupTo), read from daily rows.
 */

/** The period's events from `from` on, and any after `readTo`: RAW_WINDOW for reads that apply its end elsewhere. */
export const RAW_FROM = "project_id = {projectId:String} AND ts >= {from:DateTime64(3, 'UTC')}";

/** The end that RAW_WINDOW adds to RAW_FROM. */
export const BEFORE_READ_TO = "ts < {readTo:DateTime64(3, 'UTC')}";

/**
 * The period over raw events, up to `readTo` (`to`, or the next UTC midnight when nothing is
 * stored after now: query.ts rawParams). The bounds are bound as DateTime64 like `ts`: compared as
 * DateTime, the embedded engine's key analysis (key `toDate(ts)`) wrongly skips granules whose
 * rows all fall on the UTC date of `to`, dropping e.g. 00:00–02:30Z of a St_Johns day.
 */
export const RAW_WINDOW = `${RAW_FROM} AND ${BEFORE_READ_TO}`;

/**
 * Events from `instant` (SQL of a DateTime64) on. The key holds `toDate(ts)`, not `ts`, and the
 * embedded engine's key analysis does not derive the date from a bound on `ts` alone: it then reads
 * the `ts` of the project's whole month (3M events at 10M in 90 days) for the last hour of it. So
 * the date bound is written out where the events read are a recent few; a period's own bounds keep
 * `ts` alone (it spans most of what it reads, and the date costs a function per row).
 */
export const eventsFrom = (instant: string): string => `toDate(ts) >= toDate(${instant}) AND ts >= ${instant}`;

/** RAW_WINDOW from the instant bound as `{<start>:DateTime64}` instead of `from`, for a recent slice of the period (its last minutes): the key analysis skips its earlier days. */
export const recentWindowFrom = (start: string): string =>
  `project_id = {projectId:String} AND ${eventsFrom(`{${start}:DateTime64(3, 'UTC')}`)} AND ${BEFORE_READ_TO}`;

/**
 * The parts of the period the rollups do not hold: less than 15 minutes at either edge. The
 * `toDate(ts)` bounds repeat what the `ts` bounds imply: the key analysis (key `toDate(ts)`, then
 * kind) does not derive them through the OR, and without them reads the project's whole month
 * (37 granules instead of 2 in `npm run bench:reports -- --scale 0.1`).
 */
const slice = (lo: string, hi: string) =>
  `(toDate(ts) >= toDate({${lo}:DateTime64(3, 'UTC')}) AND toDate(ts) <= toDate({${hi}:DateTime64(3, 'UTC')}) AND ts >= {${lo}:DateTime64(3, 'UTC')} AND ts < {${hi}:DateTime64(3, 'UTC')})`;
const RAW_SLICES = `project_id = {projectId:String} AND (${slice('from', 'rollupFrom')} OR ${slice('rollupTo', 'to')})`;

/** Rollups kept twice, as `{family}_15m` and `{family}_1d` with the same columns (migrations 0003–0009, 0011–0017, 0020–0021). */
export type RollupFamily = 'stats' | 'pages' | 'referrers' | 'countries' | 'cities' | 'tech' | 'custom_events';

// [dayFrom, dayTo) holds the whole UTC days of the rollup range (equal when none).
const WHOLE_DAYS = "project_id = {projectId:String} AND bucket >= {dayFrom:DateTime('UTC')} AND bucket < {dayTo:DateTime('UTC')}";
// The whole days after a closed-days part [dayFrom, partTo) (periodRollupRows).
const WHOLE_DAYS_FROM_PART = WHOLE_DAYS.replace('{dayFrom:', '{partTo:');
/** The closed days a part merges, [dayFrom, partTo) (src/reports/sql/day-parts.ts). */
export const PART_DAYS = WHOLE_DAYS.replace('{dayTo:', '{partTo:');
const EDGES =
  "project_id = {projectId:String} AND ((bucket >= {rollupFrom:DateTime('UTC')} AND bucket < {dayFrom:DateTime('UTC')}) OR (bucket >= {dayTo:DateTime('UTC')} AND bucket < {rollupTo:DateTime('UTC')}))";

/**
 * Each family's rollup row computed from raw events, column for column as its materialized view
 * (sql/migrations) writes it, so the rows of the raw slices merge with the stored ones.
 */
const FROM_RAW: Readonly<Record<RollupFamily, { columns: string; kinds: string; groupBy: string }>> = {
  stats: {
    columns:
      "countIf(kind = 'pageview') AS pageviews, uniqCombinedStateIf(14)(visitor_id, kind = 'pageview') AS visitors, " +
      "uniqCombinedStateIf(14)(session_id, kind = 'pageview') AS sessions, countIf(kind = 'leave') AS leaves, " +
      "sumIf(toUInt64(duration_ms), kind = 'leave') AS duration_ms, uniqCombinedStateIf(14)(session_id, kind = 'leave') AS leave_sessions",
    kinds: "kind IN ('pageview', 'leave')",
    groupBy: '',
  },
  pages: { columns: 'path, count() AS pageviews, uniqCombinedState(14)(visitor_id) AS visitors', kinds: "kind = 'pageview'", groupBy: ', path' },
  referrers: {
    columns: 'referrer_source, count() AS pageviews, uniqCombinedState(14)(visitor_id) AS visitors',
    kinds: "kind = 'pageview'",
    groupBy: ', referrer_source',
  },
  countries: {
    columns: 'country_code, country_name, count() AS pageviews, uniqCombinedState(14)(visitor_id) AS visitors',
    kinds: "kind = 'pageview'",
    groupBy: ', country_code, country_name',
  },
  cities: {
    columns: 'country_code, country_name, city, count() AS pageviews, uniqCombinedState(14)(visitor_id) AS visitors',
    kinds: "kind = 'pageview' AND city != ''",
    groupBy: ', country_code, country_name, city',
  },
  tech: {
    columns: 'device, browser, os, count() AS pageviews, uniqCombinedState(14)(visitor_id) AS visitors',
    kinds: "kind = 'pageview'",
    groupBy: ', device, browser, os',
  },
  custom_events: {
    columns: 'event_name, kind, currency, count() AS events, uniqCombinedState(14)(visitor_id) AS people, sum(amount_cents) AS amount_cents',
    kinds: "kind IN ('custom', 'transaction')",
    groupBy: ', event_name, kind, currency',
  },
};

const rawSliceRows = (family: RollupFamily) => {
  const f = FROM_RAW[family];
  return `SELECT project_id, toStartOfFifteenMinutes(ts) AS bucket, ${f.columns} FROM events WHERE ${RAW_SLICES} AND ${f.kinds} GROUP BY project_id, bucket${f.groupBy}`;
};

/** Families whose closed days a period can read merged in one part (migration 0026, src/reports/day-parts.ts). */
export const PART_FAMILIES = ['pages', 'countries', 'cities', 'tech', 'custom_events'] as const;
export type PartFamily = (typeof PART_FAMILIES)[number];
/** Each family's table of closed-days parts (migration 0026; the tech lists' per dimension, 0029). */
export const PART_TABLES: Readonly<Record<PartFamily, string>> = {
  pages: 'pages_parts',
  countries: 'countries_parts',
  cities: 'cities_parts',
  tech: 'tech_dimension_parts',
  custom_events: 'custom_events_parts',
};
/** The families whose part holds the daily table's columns, a row per value: periodRollupRows reads them beside the daily rows. */
export type ValuePartFamily = Exclude<PartFamily, 'tech'>;
/**
 * The count each family's lists rank by (preRanked), which a stored part's size sums (src/reports/sql/day-parts.ts).
 * Countries, cities and the tech lists never rank first: their count is read but unused (the tech part, a row per
 * dimension, counts each pageview three times).
 */
export const RANKED_BY: Readonly<Record<PartFamily, string>> = { pages: 'pageviews', countries: 'pageviews', cities: 'pageviews', tech: 'pageviews', custom_events: 'events' };

/**
 * rollupRows for reads that merge the whole period into one answer (no time bucket): the closed
 * days [dayFrom, partTo) from the part `partKey` of them, which the caller knows to be stored
 * (day-parts.ts), and the daily rows from `partTo` on. periodParams binds `partTo` = `dayFrom`,
 * which reads no part (its branch is dropped) and every whole day as rollupRows does.
 */
export const periodRollupRows = (family: ValuePartFamily) =>
  rollupRows(family).replace(WHOLE_DAYS, `${WHOLE_DAYS_FROM_PART} ${dayPartBranch(family, '* EXCEPT (part_key, marker, created)')}`);

/** rollupRows after the closed days' part: the daily rows from `partTo` on (every whole day when no part is read), the edges and slices. */
export const rollupRowsAfterDayPart = (family: RollupFamily) => rollupRows(family).replace(WHOLE_DAYS, WHOLE_DAYS_FROM_PART);

/**
 * The value rows (`columns` of them) of `family`'s part `partKey` as a branch of a UNION ALL, which
 * query.ts drops whole for reads that bind no part.
 */
export const dayPartBranch = (family: PartFamily, columns: string) =>
  `${DAY_PART_START} UNION ALL SELECT ${columns} FROM ${PART_TABLES[family]} WHERE project_id = {projectId:String} AND part_key = {partKey:String} AND marker = 0 ${DAY_PART_END}`;

/**
 * A ranked list's condition that keeps only its top `{limit}` values of `column` (by the summed
 * RANKED_BY column, ties by the value) over periodRollupRows(`family`): the list then merges the
 * visitor states of those values alone, as merging states is the costly part of a list with many
 * values. A read whose closed days come from a part of few values, or of a small count in all,
 * drops it (withoutPreRank, src/reports/day-parts.ts): merging them all costs less than ranking them first.
 */
export const preRanked = (column: string, family: ValuePartFamily) => `${PRE_RANK_START}
WHERE ${column} IN (
  SELECT ${column} FROM ${periodRollupRows(family)}
  GROUP BY ${column} ORDER BY sum(${RANKED_BY[family]}) DESC, ${column} ASC LIMIT {limit:UInt32})
${PRE_RANK_END}`;

/**
 * The rollup rows of [from, to) as a subquery to select FROM: whole UTC days from the daily
 * table, the partial days at either edge from the 15-minute one, and the sub-15-minute slices
 * at the very edges computed from raw events. Merging a few dozen daily states instead of
 * thousands of 15-minute ones is what keeps 30d/90d reports fast; all three hold
 * `uniqCombined(14)` states, so they merge into one answer.
 */
export const rollupRows = (family: RollupFamily) =>
  `(SELECT * FROM ${family}_1d WHERE ${WHOLE_DAYS} ${EDGES_START} UNION ALL SELECT * FROM ${family}_15m WHERE ${EDGES} ${EDGES_END} ${RAW_SLICES_START} UNION ALL ${rawSliceRows(family)} ${RAW_SLICES_END})`;

// Comments around the branches a query drops when they cannot hold a row: even reading no
// granule, a branch costs time (raw slices ~6 ms a query in the benchmark, 15-minute edges
// ~1.5 ms: stats at 1M events, 30d, 9.4 → 7.9 ms).
const RAW_SLICES_START = '/* raw slices */';
const RAW_SLICES_END = '/* end raw slices */';
const EDGES_START = '/* 15-minute edges */';
const EDGES_END = '/* end 15-minute edges */';
const DAY_PART_START = '/* closed days part */';
const DAY_PART_END = '/* end closed days part */';
const PRE_RANK_START = '/* pre-rank */';
const PRE_RANK_END = '/* end pre-rank */';
const literal = (text: string) => text.replace(/[/*]/g, '\\$&');
const branch = (start: string, end: string) => new RegExp(`${literal(start)}[\\s\\S]*?${literal(end)}`, 'g');
// Compiled once: every rollup query passes through them.
const RAW_SLICES_BRANCH = branch(RAW_SLICES_START, RAW_SLICES_END);
const EDGES_BRANCH = branch(EDGES_START, EDGES_END);
const DAY_PART_BRANCH = branch(DAY_PART_START, DAY_PART_END);
const PRE_RANK_BRANCH = branch(PRE_RANK_START, PRE_RANK_END);

/** `sql` without its raw-slice branches: for periods whose bounds both fall on rollup steps. */
export const withoutRawSlices = (sql: string) => sql.replace(RAW_SLICES_BRANCH, '');

/** `sql` without its 15-minute edge branches: for periods whose rollup range is whole UTC days. */
export const withoutEdgeRows = (sql: string) => sql.replace(EDGES_BRANCH, '');

/** `sql` without its closed-days part branches: for reads that bind no part (`partTo` = `dayFrom`). */
export const withoutDayPart = (sql: string) => sql.replace(DAY_PART_BRANCH, '');

/** `sql` without its ranking before the merge (preRanked): for reads whose every value is merged at less cost. */
export const withoutPreRank = (sql: string) => sql.replace(PRE_RANK_BRANCH, '');

/** The families whose closed-days part `sql` reads (dayPartBranch). */
export const dayPartFamiliesOf = (sql: string): PartFamily[] => PART_FAMILIES.filter((f) => sql.includes(` FROM ${PART_TABLES[f]} WHERE `));

/**
 * The bot rollup rows of [from, to) (bots_15m has no daily twin), with the sub-15-minute slices
 * from raw `bot_hits` as its materialized view (migration 0010) would write them.
 */
export const BOT_ROWS = `(SELECT * FROM bots_15m WHERE project_id = {projectId:String} AND bucket >= {rollupFrom:DateTime('UTC')} AND bucket < {rollupTo:DateTime('UTC')}
${RAW_SLICES_START} UNION ALL
SELECT project_id, toStartOfFifteenMinutes(ts) AS bucket, category, bot_slug, bot_name, path, count() AS hits, countIf(verified = 1) AS verified_hits
FROM bot_hits WHERE ${RAW_SLICES} GROUP BY project_id, bucket, category, bot_slug, bot_name, path ${RAW_SLICES_END})`;
