import * as v from 'valibot';
import { defineReport } from '../definition.js';
import { BOT_FILTERS, filterParam, periodParam } from '../params.js';
import { GOAL_BOT_PERIODS } from '../periods.js';
import { queryRows, rollupParams } from '../query.js';
import { byMetricThenName, num, PeriodEntries, periodFields, resolveFor, str } from '../shape.js';
import { BOT_ROWS } from '../sql/window.js';

/** How many bots and pages the ranked lists carry (the contract gives the bots report no `limit`). */
export const BOTS_TOP_N = 10;

const CATEGORIES = ['ai_answer', 'indexing', 'training', 'other'] as const;

/* `{filter}` is 'all' or one category; the Enum8 column compares with its names. */
const FILTERED = "({filter:String} = 'all' OR toString(category) = {filter:String})";

const TOTALS_SQL = `
SELECT toString(category) AS category_name, sum(hits) AS hit_count, sum(verified_hits) AS verified_count
FROM ${BOT_ROWS}
GROUP BY category_name`;

/* Aliases differ from column names: ClickHouse aliases are query-wide. Day of each 15-minute bucket in the project zone, as epoch seconds of the local midnight. */
const SERIES_SQL = `
SELECT toUnixTimestamp(toStartOfDay(bucket, {tz:String})) AS day, toString(bot_name) AS name, sum(hits) AS hit_count
FROM ${BOT_ROWS}
WHERE ${FILTERED}
GROUP BY day, name`;

const TOP_BOTS_SQL = `
SELECT toString(bot_slug) AS slug, any(toString(bot_name)) AS label, any(toString(category)) AS category_name,
       sum(hits) AS hit_count, sum(verified_hits) AS verified_count
FROM ${BOT_ROWS}
WHERE ${FILTERED}
GROUP BY slug
ORDER BY hit_count DESC, slug ASC
LIMIT {limit:UInt32}`;

const TOP_PAGES_SQL = `
SELECT path, sum(hits) AS hit_count
FROM ${BOT_ROWS}
WHERE ${FILTERED}
GROUP BY path
ORDER BY hit_count DESC, path ASC
LIMIT {limit:UInt32}`;

const Named = v.object({ name: str('Bot name'), count: num('Hits') });
const TopBot = v.object({
  slug: str('Bot identifier'),
  name: str('Bot name'),
  category: v.pipe(v.picklist(CATEGORIES), v.description('ai_answer, indexing, training or other')),
  count: num('Hits'),
  verified: num('Hits verified by published IP ranges or reverse DNS'),
});
export const BotsResponse = v.object({
  ...PeriodEntries,
  filter: v.pipe(v.picklist(BOT_FILTERS), v.description('The applied category filter')),
  data: v.object({
    totals: v.pipe(
      v.object({
        all: num('All bot hits'),
        verified: num('Verified bot hits'),
        ai_answer: num('AI answer engine hits'),
        indexing: num('Search indexing hits'),
        training: num('AI training crawler hits'),
        other: num('Other bot hits'),
      }),
      v.description('Always over every category, whatever the filter'),
    ),
    series: v.array(
      v.object({
        date: num('Day start in the project time zone, epoch milliseconds'),
        count: num('Hits that day'),
        byBot: v.array(Named),
      }),
    ),
    topBots: v.array(TopBot),
    topPages: v.array(v.object({ path: str('Path'), count: num('Hits') })),
  }),
});
type Bots = v.InferOutput<typeof BotsResponse>;

/**
 * GET /:domain/bots — bot traffic from the bot rollup. `totals` always cover every category;
 * `filter` narrows `series`, `topBots` and `topPages`. Series are zero-filled day buckets in the
 * project zone, `byBot` ranked by hits then name; top lists carry at most BOTS_TOP_N entries
 * ranked by hits, ties by slug/path.
 */
export const botsReport = defineReport({
  name: 'bots',
  path: '/:domain/bots',
  summary: 'Bot traffic: totals per category, daily series, top bots and top pages',
  description:
    'Periods: today, 7d (default), 30d, 6m, 12m. `filter` (all, ai_answer, indexing, training, other) narrows series, ' +
    `topBots and topPages; totals always cover every category. Series: one entry per day in the project time zone (zero-filled), date as epoch ms. Top lists: ${BOTS_TOP_N} entries, ranked by hits then slug/path. Works with API keys and sessions alike.`,
  query: v.object({ period: periodParam(GOAL_BOT_PERIODS, '7d'), filter: filterParam() }),
  response: BotsResponse,
  async run(ctx, input): Promise<Bots> {
    const period = resolveFor(ctx, input.period);
    const base = rollupParams(ctx.deps, ctx.project.id, period);
    const params = { ...base, filter: input.filter, limit: BOTS_TOP_N };
    const [totalRows, seriesRows, topBots, topPages] = await Promise.all([
      queryRows(ctx.deps, TOTALS_SQL, base, { category_name: 'string', hit_count: 'number', verified_count: 'number' }),
      queryRows(ctx.deps, SERIES_SQL, params, { day: 'number', name: 'string', hit_count: 'number' }),
      queryRows(ctx.deps, TOP_BOTS_SQL, params, { slug: 'string', label: 'string', category_name: 'string', hit_count: 'number', verified_count: 'number' }),
      queryRows(ctx.deps, TOP_PAGES_SQL, params, { path: 'string', hit_count: 'number' }),
    ]);

    const totals = { all: 0, verified: 0, ai_answer: 0, indexing: 0, training: 0, other: 0 };
    for (const r of totalRows) {
      totals[r.category_name as (typeof CATEGORIES)[number]] += r.hit_count;
      totals.all += r.hit_count;
      totals.verified += r.verified_count;
    }

    const perDay = new Map<number, { name: string; count: number }[]>();
    for (const r of seriesRows) {
      const list = perDay.get(r.day * 1000) ?? [];
      list.push({ name: r.name, count: r.hit_count });
      perDay.set(r.day * 1000, list);
    }
    const rank = byMetricThenName<{ name: string; count: number }>((b) => b.count, (b) => b.name);
    const series = period.buckets.map((date) => {
      const byBot = (perDay.get(date) ?? []).sort(rank);
      return { date, count: byBot.reduce((s, b) => s + b.count, 0), byBot };
    });

    return {
      ...periodFields(period),
      filter: input.filter,
      data: {
        totals,
        series,
        topBots: topBots.map((b) => ({
          slug: b.slug,
          name: b.label,
          category: b.category_name as (typeof CATEGORIES)[number],
          count: b.hit_count,
          verified: b.verified_count,
        })),
        topPages: topPages.map((p) => ({ path: p.path, count: p.hit_count })),
      },
    };
  },
  csv: {
    title: 'bots',
    columns: [
      { header: 'slug', value: (b: v.InferOutput<typeof TopBot>) => b.slug },
      { header: 'name', value: (b) => b.name },
      { header: 'category', value: (b) => b.category },
      { header: 'hits', value: (b) => b.count },
      { header: 'verified_hits', value: (b) => b.verified },
    ],
    rows: (r: Bots) => r.data.topBots,
  },
});
