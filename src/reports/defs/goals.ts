import * as v from 'valibot';
import type { Deps } from '../../deps.js';
import { pathPatternRegex } from '../../goals/patterns.js';
import { GOAL_TYPES, goalStore, type Goal, type GoalType } from '../../goals/store.js';
import { defineReport } from '../definition.js';
import type { Filter } from '../../analysis/question.js';
import { ranged, rangeOnlyEntries, resolveInput } from '../analysis-input.js';
import { filtersOf, FiltersQuery, keptEvents } from '../filter-input.js';
import { choiceParam } from '../params.js';
import { GOAL_BOT_PERIODS, type ResolvedPeriod } from '../periods.js';
import { queryRowsWithDayParts, sourceRead } from '../day-parts.js';
import { periodParams, queryOne, queryRows, type QueryParams, type RowOf, type RowSpec } from '../query.js';
import { num, PeriodEntries, periodFields, str } from '../shape.js';
import { avgVisitSeconds } from '../sql/stats.js';
import { periodRollupRows, RAW_WINDOW, rollupRows } from '../sql/window.js';

/**
 * What each goal type measures over the period (README and the OpenAPI description carry the
 * same table):
 *
 * | type       | value                          | category   | direction | format   | current                                                      | conversionRate            |
 * |------------|--------------------------------|------------|-----------|----------|--------------------------------------------------------------|---------------------------|
 * | event      | custom/transaction event name  | conversion | up        | number   | unique visitors who fired the event                          | current ÷ period visitors |
 * | pageview   | path pattern, `*` = any chars  | conversion | up        | number   | unique visitors with a pageview whose path matches           | current ÷ period visitors |
 * | revenue    | transaction event name         | revenue    | up        | currency | sum of amounts in minor units, in the most used currency     | null                      |
 * | traffic    | referrer source, '' = all      | traffic    | up        | number   | unique visitors (from that source when set)                  | null                      |
 * | engagement | ''                             | engagement | up        | duration | average visit duration in seconds (per visit, 0 none)        | null                      |
 *
 * conversionRate is null when the period has no visitors. `currency` is the ISO code of a
 * revenue goal's `current` (the currency with most transactions; ties by code), else null.
 * `*` in a pageview pattern matches any sequence of characters, `/` included.
 */
export const GOAL_TYPE_TABLE = `| type | value | category | direction | format | current | conversionRate |
|---|---|---|---|---|---|---|
| event | custom or transaction event name | conversion | up | number | unique visitors who fired the event | current ÷ visitors of the period |
| pageview | path pattern, \`*\` matches any characters including \`/\` | conversion | up | number | unique visitors with a pageview whose path matches | current ÷ visitors of the period |
| revenue | transaction event name | revenue | up | currency | sum of transaction amounts in minor units, in the most used currency (\`currency\`) | null |
| traffic | referrer source, \`""\` for all traffic | traffic | up | number | unique visitors (from that source when set) | null |
| engagement | \`""\` | engagement | up | duration | average visit duration in seconds, as stats' avgDurationSeconds (0 when none) | null |

conversionRate is null when the period has no visitors. \`currency\` is the ISO 4217 code of a revenue goal's \`current\` (the currency with the most transactions, ties by code), null for other types and for revenue goals without transactions.`;

/** The goals report's periods: its own presets, plus a custom range and all time. */
const GOAL_PERIODS = [...GOAL_BOT_PERIODS, 'custom', 'all'] as const;

const CATEGORY = { event: 'conversion', pageview: 'conversion', revenue: 'revenue', traffic: 'traffic', engagement: 'engagement' } as const;
const FORMAT = { event: 'number', pageview: 'number', revenue: 'currency', traffic: 'number', engagement: 'duration' } as const;

const PERIOD_TOTALS_SQL = `
SELECT uniqCombinedMerge(14)(visitors) AS visitors, sum(duration_ms) AS duration_total, uniqCombinedMerge(14)(leave_sessions) AS leave_sessions
FROM ${rollupRows('stats')}`;

/* Custom events and pages read the closed days of the period from their parts (src/reports/day-parts.ts), as their lists do. */
const EVENT_PEOPLE_SQL = `
SELECT toString(event_name) AS name, uniqCombinedMerge(14)(people) AS people
FROM ${periodRollupRows('custom_events')}
WHERE event_name IN {names:Array(String)}
GROUP BY name`;

const REVENUE_SQL = `
SELECT toString(event_name) AS name, toString(currency) AS currency_code, sum(events) AS transaction_count, sum(amount_cents) AS amount_total
FROM ${periodRollupRows('custom_events')}
WHERE kind = 'transaction' AND event_name IN {names:Array(String)}
GROUP BY name, currency_code`;

/* Paths are merged first so each distinct path is matched once against every pattern. */
const PAGEVIEW_SQL = `
SELECT goal_index, uniqCombinedMerge(14)(path_visitors) AS visitors
FROM (
  SELECT path, uniqCombinedMergeState(14)(visitors) AS path_visitors
  FROM ${periodRollupRows('pages')}
  GROUP BY path
)
ARRAY JOIN arrayFilter(i -> match(path, {patterns:Array(String)}[i]), range(1, length({patterns:Array(String)}) + 1)) AS goal_index
GROUP BY goal_index`;

const TRAFFIC_SQL = `
SELECT toString(referrer_source) AS source, uniqCombinedMerge(14)(visitors) AS visitors
FROM ${rollupRows('referrers')}
WHERE referrer_source IN {sources:Array(String)}
GROUP BY source`;

/*
 * The same five measures over raw events, for filtered requests: each reads only the events the
 * filters keep (`kept`, keptEventsCondition). Visitors of the period are those with a kept
 * pageview, custom or transaction event; engagement averages the whole visits holding one (as
 * the analysis metrics do). Unique counts are exact here, as everywhere in the pipeline.
 */
const COUNTED = "kind IN ('pageview', 'custom', 'transaction')";
const FILTERED_SQL = {
  totals: (kept: string) => `
SELECT uniqExactIf(visitor, kept_events > 0) AS visitors,
       sumIf(duration, kept_events > 0 AND leaves > 0) AS duration_total,
       countIf(kept_events > 0 AND leaves > 0) AS leave_sessions
FROM (
  SELECT session_id, any(visitor_id) AS visitor, countIf(${COUNTED} AND (${kept})) AS kept_events,
         sumIf(toUInt64(duration_ms), kind = 'leave') AS duration, countIf(kind = 'leave') AS leaves
  FROM events WHERE ${RAW_WINDOW}
  GROUP BY session_id
)`,
  people: (kept: string) => `
SELECT toString(event_name) AS name, uniqExact(visitor_id) AS people
FROM events
WHERE ${RAW_WINDOW} AND kind IN ('custom', 'transaction') AND event_name IN {names:Array(String)} AND (${kept})
GROUP BY name`,
  revenue: (kept: string) => `
SELECT toString(event_name) AS name, toString(currency) AS currency_code, count() AS transaction_count, sum(amount_cents) AS amount_total
FROM events
WHERE ${RAW_WINDOW} AND kind = 'transaction' AND event_name IN {names:Array(String)} AND (${kept})
GROUP BY name, currency_code`,
  pageview: (kept: string) => `
SELECT goal_index, uniqExact(visitor_id) AS visitors
FROM (SELECT visitor_id, path FROM events WHERE ${RAW_WINDOW} AND kind = 'pageview' AND (${kept}))
ARRAY JOIN arrayFilter(i -> match(path, {patterns:Array(String)}[i]), range(1, length({patterns:Array(String)}) + 1)) AS goal_index
GROUP BY goal_index`,
  traffic: (kept: string) => `
SELECT toString(referrer_source) AS source, uniqExact(visitor_id) AS visitors
FROM events
WHERE ${RAW_WINDOW} AND kind = 'pageview' AND referrer_source IN {sources:Array(String)} AND (${kept})
GROUP BY source`,
};

/** The SQL of each measure: the rollup queries unfiltered, the raw ones narrowed by `kept` when filtered. */
function goalQueries(kept: string | null) {
  return kept === null
    ? { totals: PERIOD_TOTALS_SQL, people: EVENT_PEOPLE_SQL, revenue: REVENUE_SQL, pageview: PAGEVIEW_SQL, traffic: TRAFFIC_SQL }
    : {
        totals: FILTERED_SQL.totals(kept),
        people: FILTERED_SQL.people(kept),
        revenue: FILTERED_SQL.revenue(kept),
        pageview: FILTERED_SQL.pageview(kept),
        traffic: FILTERED_SQL.traffic(kept),
      };
}

const GoalResult = v.object({
  id: str('Goal identifier'),
  name: str('Display name'),
  type: v.pipe(v.picklist(GOAL_TYPES), v.description('Goal type')),
  value: str('Matching value for the type'),
  target: v.pipe(v.nullable(v.number()), v.description('Optional target')),
  category: v.pipe(v.picklist(['conversion', 'revenue', 'traffic', 'engagement']), v.description('See the type table')),
  direction: v.pipe(v.picklist(['up']), v.description('Which way is better: up for every current type')),
  format: v.pipe(v.picklist(['number', 'currency', 'duration']), v.description('How to show `current`')),
  current: num('Metric value for the period (see the type table)'),
  conversionRate: v.pipe(v.nullable(v.number()), v.description('current ÷ visitors for conversion goals; null otherwise or without visitors')),
  currency: v.pipe(v.nullable(v.string()), v.description('ISO 4217 code of a revenue goal’s current; null otherwise')),
});
export const GoalsResponse = v.object({ ...PeriodEntries, goals: v.array(GoalResult) });
type GoalsResult = v.InferOutput<typeof GoalsResponse>;
export type GoalRow = v.InferOutput<typeof GoalResult>;

const valuesOf = (goals: readonly Goal[], type: GoalType) => [...new Set(goals.filter((g) => g.type === type).map((g) => g.value))];

/** Runs `sql` only when the goals need it: a project without pageview goals never scans pages. */
async function when<T>(needed: boolean, run: () => Promise<T>, empty: T): Promise<T> {
  return needed ? run() : empty;
}

/** Reads the rows of a goal measure: with the closed days' parts where the SQL reads them (queryRowsWithDayParts). */
type ReadRows = <S extends RowSpec>(sql: string, params: QueryParams, spec: S) => Promise<RowOf<S>[]>;

/** Revenue per transaction name in its most used currency (ties by code). */
async function revenueByName(read: ReadRows, sql: string, params: QueryParams, names: string[]) {
  const rows = await read(sql, { ...params, names }, {
    name: 'string',
    currency_code: 'string',
    transaction_count: 'number',
    amount_total: 'number',
  });
  rows.sort((a, b) => b.transaction_count - a.transaction_count || (a.currency_code < b.currency_code ? -1 : a.currency_code > b.currency_code ? 1 : 0));
  const best = new Map<string, { amount: number; currency: string }>();
  for (const r of rows) if (!best.has(r.name)) best.set(r.name, { amount: r.amount_total, currency: r.currency_code });
  return best;
}

/**
 * Every goal of the project with its value over `period` (the type table above). The goals
 * report calls it for its period (with the request's filters); email reports call it for whole
 * weeks and months. Unfiltered it reads the rollups (pages and custom events with their closed
 * days' parts), filtered the kept raw events.
 */
export async function measureGoals(
  deps: Deps,
  projectId: string,
  period: ResolvedPeriod,
  filters: readonly Filter[] = [],
  definitions?: readonly Goal[],
): Promise<GoalRow[]> {
  const goals = definitions ?? (await goalStore.list(deps.redis, projectId));
  const filtered = filters.length > 0 ? keptEvents(filters, periodParams(projectId, period)) : null;
  const { deps: at, params } = filtered ? { deps, params: filtered.params } : await sourceRead(deps, projectId, period, 'rollup');
  const read: ReadRows = (sql, values, spec) => queryRowsWithDayParts(at, sql, values, spec);
  const sql = goalQueries(filtered?.kept ?? null);
  const events = valuesOf(goals, 'event');
  const revenue = valuesOf(goals, 'revenue');
  const patterns = valuesOf(goals, 'pageview');
  const sources = valuesOf(goals, 'traffic').filter((s) => s !== '');
  const [totals, people, money, pages, traffic] = await Promise.all([
    queryOne(at, sql.totals, params, { visitors: 'number', duration_total: 'number', leave_sessions: 'number' }),
    when(events.length > 0, async () => {
      const rows = await read(sql.people, { ...params, names: events }, { name: 'string', people: 'number' });
      return new Map(rows.map((r) => [r.name, r.people]));
    }, new Map<string, number>()),
    when(revenue.length > 0, () => revenueByName(read, sql.revenue, params, revenue), new Map<string, { amount: number; currency: string }>()),
    when(patterns.length > 0, async () => {
      const rows = await read(sql.pageview, { ...params, patterns: patterns.map(pathPatternRegex) }, {
        goal_index: 'number',
        visitors: 'number',
      });
      return new Map(rows.map((r) => [patterns[r.goal_index - 1]!, r.visitors]));
    }, new Map<string, number>()),
    when(sources.length > 0, async () => {
      const rows = await queryRows(at, sql.traffic, { ...params, sources }, { source: 'string', visitors: 'number' });
      return new Map(rows.map((r) => [r.source, r.visitors]));
    }, new Map<string, number>()),
  ]);
  const rate = (current: number) => (totals.visitors > 0 ? current / totals.visitors : null);

  const measure = (g: Goal): Pick<GoalRow, 'current' | 'conversionRate' | 'currency'> => {
    switch (g.type) {
      case 'event': {
        const current = people.get(g.value) ?? 0;
        return { current, conversionRate: rate(current), currency: null };
      }
      case 'pageview': {
        const current = pages.get(g.value) ?? 0;
        return { current, conversionRate: rate(current), currency: null };
      }
      case 'revenue': {
        const m = money.get(g.value);
        return { current: m?.amount ?? 0, conversionRate: null, currency: m?.currency ?? null };
      }
      case 'traffic':
        return { current: g.value === '' ? totals.visitors : traffic.get(g.value) ?? 0, conversionRate: null, currency: null };
      case 'engagement':
        return {
          current: avgVisitSeconds(totals) ?? 0,
          conversionRate: null,
          currency: null,
        };
    }
  };

  return goals.map((g) => ({
    id: g.id,
    name: g.name,
    type: g.type,
    value: g.value,
    target: g.target,
    category: CATEGORY[g.type],
    direction: 'up' as const,
    format: FORMAT[g.type],
    ...measure(g),
  }));
}

const GoalsQuery = ranged(v.object({ ...rangeOnlyEntries(), period: choiceParam('period', GOAL_PERIODS, '30d'), ...FiltersQuery }));
/** The query, with the definitions `dependsOn` read (absent where the report runs without withAnswerCache). */
type GoalsInput = v.InferOutput<typeof GoalsQuery> & { definitions?: readonly Goal[] };

/** GET /:domain/goals — every goal of the project with its metric over the period. */
export const goalsReport = defineReport({
  name: 'goals',
  // The definitions live in Redis and change without a data version moving: an answer is reused only for the same ones.
  dependsOn: async (ctx) => ({ definitions: await goalStore.list(ctx.deps.redis, ctx.project.id) }),
  path: '/:domain/goals',
  summary: 'Goals with their current value over the period',
  description: `Periods: ${GOAL_PERIODS.join(', ')} (default 30d; custom with from and to as YYYY-MM-DD; all since the first event). Works with API keys and sessions alike (full data). With \`filters\`, every goal is measured over the events the filters keep, from raw events; the visitors of the period (conversion rates, all-traffic goals) are those with a kept pageview, custom or transaction event, and engagement averages the whole visits holding one.\n\n${GOAL_TYPE_TABLE}`,
  query: GoalsQuery,
  response: GoalsResponse,
  async run(ctx, input: GoalsInput): Promise<GoalsResult> {
    const { period } = await resolveInput(ctx, input);
    return { ...periodFields(period), goals: await measureGoals(ctx.deps, ctx.project.id, period, filtersOf(input), input.definitions) };
  },
  csv: {
    title: 'goals',
    columns: [
      { header: 'name', value: (g: GoalRow) => g.name },
      { header: 'type', value: (g) => g.type },
      { header: 'value', value: (g) => g.value },
      { header: 'target', value: (g) => g.target },
      { header: 'category', value: (g) => g.category },
      { header: 'format', value: (g) => g.format },
      { header: 'current', value: (g) => g.current },
      { header: 'currency', value: (g) => g.currency },
      { header: 'conversion_rate', value: (g) => g.conversionRate },
    ],
    rows: (r: GoalsResult) => r.goals,
  },
});
