import * as v from 'valibot';
import type { Filter } from '../../analysis/question.js';
import { rangeBounds } from '../project-range.js';
import { runQuestion } from '../../analysis/run.js';
import { analysisQuery, filtersOf, resolveInput, type AnalysisInput } from '../analysis-input.js';
import type { ReportContext } from '../definition.js';
import { definePlannedReport } from '../planned.js';
import type { ResolvedPeriod } from '../periods.js';
import type { Source } from '../planner.js';
import { queryOne, sourceParams } from '../query.js';
import { num, PeriodEntries, periodFields, str } from '../shape.js';
import { avgVisitSeconds, STATS_SQL } from '../sql/stats.js';
import { sharesStatsAndSeries, STATS_TOTALS, statsAndSeries } from '../stats-series.js';
import { pinClosedHours } from '../../analysis/closed-hours.js';
import { visitRatesOf } from '../visits-by-source.js';

const nullableNum = (description: string) => v.pipe(v.nullable(v.number()), v.description(description));

/** The numbers of one period, the answer's own and its comparison's. */
const Numbers = {
  pageviews: num('Total pageview events'),
  visitors: num('Unique visitors'),
  sessions: num('Unique browser sessions'),
  avgDurationSeconds: nullableNum('Average visit duration in seconds: the summed leave durations of each session, averaged over the sessions with at least one leave event; null without leave events'),
  bounceRate: nullableNum('Share of visits with exactly one pageview and no custom or transaction event, of the visits with at least one pageview (0–1); null without such visits'),
  viewsPerVisit: nullableNum('Pageviews per visit, over the visits with at least one pageview; null without such visits'),
};

/** Answer of `stats`. */
export const StatsResponse = v.object({
  ...PeriodEntries,
  ...Numbers,
  comparison: v.optional(
    v.pipe(
      v.object({ from: str('Start of the compared period (ISO 8601, UTC)'), to: str('End of the compared period, the last instant counted (ISO 8601, UTC)'), ...Numbers }),
      v.description('The same numbers over the compared period (with `compare`)'),
    ),
  ),
});
type Stats = v.InferOutput<typeof StatsResponse>;
type StatNumbers = Omit<Stats, keyof typeof PeriodEntries | 'comparison'>;

const ALL_METRICS = ['pageviews', 'visitors', 'sessions', 'avgDurationSeconds', 'bounceRate', 'viewsPerVisit'] as const;

/**
 * Unfiltered: the rollup (or raw) headline query (a read the timeseries report shares when `input`
 * names the request's own period: stats-series.ts), and beside it the period's visits by source
 * for the two per-visit metrics no rollup holds (a pass the referrers report shares likewise).
 * Filtered: every number from one question.
 */
async function measure(ctx: ReportContext, period: ResolvedPeriod, filters: readonly Filter[], source: Source, input?: AnalysisInput): Promise<StatNumbers> {
  if (filters.length) {
    const [row] = await runQuestion(ctx.deps, ctx.project.id, period, { metrics: ALL_METRICS, dimensions: [], filters });
    return {
      pageviews: Number(row?.pageviews ?? 0),
      visitors: Number(row?.visitors ?? 0),
      sessions: Number(row?.sessions ?? 0),
      avgDurationSeconds: (row?.avgDurationSeconds ?? null) as number | null,
      bounceRate: (row?.bounceRate ?? null) as number | null,
      viewsPerVisit: (row?.viewsPerVisit ?? null) as number | null,
    };
  }
  // The closed-hours version first, so the totals and the visits read start together (one engine statement).
  const pinned = { ...ctx, deps: await pinClosedHours(ctx.deps, ctx.project.id, period) };
  const totalsOf = async () =>
    input && sharesStatsAndSeries(pinned, period, source)
      ? (await statsAndSeries(pinned, period, input)).totals
      : queryOne(pinned.deps, STATS_SQL[source], sourceParams(pinned.deps, ctx.project.id, period, source), STATS_TOTALS);
  const [totals, rates] = await Promise.all([totalsOf(), visitRatesOf(pinned, period, input)]);
  return {
    pageviews: totals.pageviews,
    visitors: totals.visitors,
    sessions: totals.sessions,
    avgDurationSeconds: avgVisitSeconds(totals),
    ...rates,
  };
}

/** GET /:domain/stats — headline numbers of the period. */
export const statsReport = definePlannedReport({
  name: 'stats',
  path: '/:domain/stats',
  summary: 'Headline numbers: pageviews, visitors, sessions, average visit duration, bounce rate, views per visit',
  description:
    'Without `filters` the totals come from the rollups; with them every number comes from raw events (README "Analysis"). ' +
    '`compare` adds the same numbers over the previous period or the same period a year earlier.',
  query: analysisQuery(),
  response: StatsResponse,
  async compute(ctx, input, source): Promise<Stats> {
    const { period, comparison: against } = await resolveInput(ctx, input);
    const filters = filtersOf(input);
    const [own, compared] = await Promise.all([measure(ctx, period, filters, source, input), against ? measure(ctx, against, filters, source) : undefined]);
    return { ...periodFields(period), ...own, ...(against && compared ? { comparison: { ...rangeBounds(against), ...compared } } : {}) };
  },
  csv: {
    title: 'overview',
    columns: [
      { header: 'metric', value: (r: { metric: string; value: number | null }) => r.metric },
      { header: 'value', value: (r) => r.value },
    ],
    rows: (s: Stats) => [
      { metric: 'visitors', value: s.visitors },
      { metric: 'pageviews', value: s.pageviews },
      { metric: 'sessions', value: s.sessions },
      { metric: 'avg_duration_seconds', value: s.avgDurationSeconds },
      { metric: 'bounce_rate', value: s.bounceRate },
      { metric: 'views_per_visit', value: s.viewsPerVisit },
    ],
  },
});
