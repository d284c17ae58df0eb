import * as v from 'valibot';
import { defineReport } from '../definition.js';
import { ranged, rangeOnlyEntries, resolveInput } from '../analysis-input.js';
import { filtersOf, FiltersQuery, keptEvents } from '../filter-input.js';
import { toClickHouseDateTime64 } from '../../adapters/clickhouse-time.js';
import { queryRows, rawParams, type ColumnKind } from '../query.js';
import { num, PeriodEntries, periodFields, str } from '../shape.js';
import { RAW_WINDOW } from '../sql/window.js';

/** The Core Web Vitals the tracker reports; LCP, INP, FCP and TTFB in ms, CLS unitless. */
export const VITALS = ['lcp', 'inp', 'cls', 'fcp', 'ttfb'] as const;
export type Vital = (typeof VITALS)[number];

/** web.dev thresholds on p75: ≤ good is good, ≤ poor needs improvement, above is poor. */
export const VITAL_THRESHOLDS: Readonly<Record<Vital, { good: number; poor: number }>> = {
  lcp: { good: 2500, poor: 4000 },
  inp: { good: 200, poor: 500 },
  cls: { good: 0.1, poor: 0.25 },
  fcp: { good: 1800, poor: 3000 },
  ttfb: { good: 800, poor: 1800 },
};

/** Decimals kept in answers: 0.1 ms for timings, 4 places for CLS. */
const DECIMALS: Readonly<Record<Vital, number>> = { lcp: 1, inp: 1, cls: 4, fcp: 1, ttfb: 1 };

/** Pages listed, ranked by vitals samples then path. */
export const PERFORMANCE_TOP_PAGES = 10;

/*
 * Per metric: p75 (quantileExact: the element at floor(0.75·n) of the sorted samples), average
 * and sample count; NULL metric values (not measured on that page view) are skipped by all three.
 * Column names come from the closed VITALS list.
 */
const METRIC_COLUMNS = VITALS.map(
  (m) => `toFloat64(quantileExact(0.75)(${m})) AS ${m}_p75, avg(${m}) AS ${m}_avg, count(${m}) AS ${m}_samples`,
).join(',\n       ');

/**
 * Where a period's vitals events are: `vitals` holds those inserted since migration 0028, `events`
 * all of them (sorted so that a day's vitals of a part share granules with every other kind: ~40
 * times the rows read). Events stamped before the table's mark are read from `events`, the rest from
 * `vitals` (README "Vitals apart"). `since` is the mark in SQL (a bound parameter, or a scalar
 * subquery when this process has not read it), or null when the period starts at or after it. The
 * `toDate` bound lets the key analysis skip the days after the mark in `events` (README "Bounds on
 * `ts` alone do not skip days").
 */
const VITALS_COLUMNS = `path, ${VITALS.join(', ')}`;
const vitalsRows = (kept: string, since: string | null) =>
  since === null
    ? `SELECT ${VITALS_COLUMNS} FROM vitals WHERE ${RAW_WINDOW} AND (${kept})`
    : `SELECT ${VITALS_COLUMNS} FROM events
  WHERE ${RAW_WINDOW} AND toDate(ts) <= toDate(${since}) AND ts < ${since} AND kind = 'vitals' AND (${kept})
  UNION ALL
  SELECT ${VITALS_COLUMNS} FROM vitals WHERE ${RAW_WINDOW} AND ts >= ${since} AND (${kept})`;
const MARK_READ = '(SELECT min(since) FROM vitals_since)';
const MARK_BOUND = "{vitalsSince:DateTime64(3, 'UTC')}";

// One scan for both answers: the empty grouping set is the overall row (its `is_overall` is 1),
// the `(path)` set gives the pages; the overall row sorts first, then the top pages. `kept`
// narrows the vitals events to those a request's filters keep ('1' for all).
const performanceSql = (kept: string, since: string | null) => `
SELECT path, grouping(path) AS is_overall, count() AS sample_count,
       ${METRIC_COLUMNS}
FROM (${vitalsRows(kept, since)})
GROUP BY GROUPING SETS ((path), ())
ORDER BY is_overall DESC, sample_count DESC, path ASC
LIMIT {limit:UInt32}`;

const METRIC_SPEC: Record<string, ColumnKind> = Object.fromEntries(
  VITALS.flatMap((m) => [[`${m}_p75`, 'number?'], [`${m}_avg`, 'number?'], [`${m}_samples`, 'number']]),
);

const RATINGS = ['good', 'needs-improvement', 'poor'] as const;
type Rating = (typeof RATINGS)[number];

/** The web.dev rating of a p75 value. */
export function rateVital(metric: Vital, p75: number): Rating {
  const t = VITAL_THRESHOLDS[metric];
  return p75 <= t.good ? 'good' : p75 <= t.poor ? 'needs-improvement' : 'poor';
}

const roundTo = (x: number, decimals: number) => Math.round(x * 10 ** decimals) / 10 ** decimals;

const Metric = v.object({
  p75: v.pipe(v.nullable(v.number()), v.description('75th percentile (the sample at index floor(0.75·n) when sorted); null without samples')),
  avg: v.pipe(v.nullable(v.number()), v.description('Mean; null without samples')),
  samples: num('Measurements'),
  rating: v.pipe(v.nullable(v.picklist(RATINGS)), v.description('web.dev rating of p75; null without samples')),
});
type MetricResult = v.InferOutput<typeof Metric>;
const Metrics = v.object(Object.fromEntries(VITALS.map((m) => [m, Metric])) as Record<Vital, typeof Metric>);
type MetricsResult = Record<Vital, MetricResult>;

function metricsOf(row: Record<string, number | string | null>): MetricsResult {
  const out = {} as MetricsResult;
  for (const m of VITALS) {
    const samples = row[`${m}_samples`] as number;
    const p75 = row[`${m}_p75`] as number | null;
    const avg = row[`${m}_avg`] as number | null;
    out[m] = samples > 0 && p75 !== null && avg !== null
      ? { p75: roundTo(p75, DECIMALS[m]), avg: roundTo(avg, DECIMALS[m]), samples, rating: rateVital(m, p75) }
      : { p75: null, avg: null, samples: 0, rating: null };
  }
  return out;
}

const Page = v.object({ path: str('Page path'), samples: num('Vitals events recorded on the page'), ...Metrics.entries });
export const PerformanceResponse = v.object({
  ...PeriodEntries,
  overall: Metrics,
  pages: v.pipe(v.array(Page), v.description(`Top ${PERFORMANCE_TOP_PAGES} pages by vitals events, ties by path`)),
});
type Performance = v.InferOutput<typeof PerformanceResponse>;

/**
 * GET /:domain/performance — Core Web Vitals from raw vitals events: p75, average and sample
 * count per metric, rated by web.dev thresholds, overall and for the pages with most samples.
 */
export const performanceReport = defineReport({
  name: 'performance',
  path: '/:domain/performance',
  summary: 'Core Web Vitals: p75, average and samples per metric, overall and per top page',
  description:
    'LCP, INP, FCP and TTFB in milliseconds (rounded to 0.1), CLS unitless (4 decimals). p75 = quantileExact(0.75): the ' +
    'sample at index floor(0.75·n) of the sorted values. rating by web.dev thresholds on the unrounded p75: LCP 2500/4000, ' +
    `INP 200/500, CLS 0.1/0.25, FCP 1800/3000, TTFB 800/1800 (≤ first good, ≤ second needs-improvement, else poor). pages: top ${PERFORMANCE_TOP_PAGES} by vitals events. ` +
    'With `filters`, only the vitals events they keep are read (a visit-level filter keeps those of matching visits).',
  query: ranged(v.object({ ...rangeOnlyEntries(), ...FiltersQuery })),
  response: PerformanceResponse,
  async run(ctx, input): Promise<Performance> {
    const { period } = await resolveInput(ctx, input);
    const mark = await ctx.deps.vitalsMark?.since(ctx.deps.clickhouse);
    const since = mark === undefined ? MARK_READ : period.from >= mark ? null : MARK_BOUND;
    const { kept, params } = keptEvents(filtersOf(input), {
      ...rawParams(ctx.deps, ctx.project.id, period),
      limit: PERFORMANCE_TOP_PAGES + 1,
      ...(since === MARK_BOUND && { vitalsSince: toClickHouseDateTime64(mark!) }),
    });
    const rows = await queryRows(
      ctx.deps,
      performanceSql(kept, since),
      params,
      { path: 'string', is_overall: 'number', sample_count: 'number', ...METRIC_SPEC },
    );
    const overall = rows.find((r) => r.is_overall === 1);
    const pages = rows.filter((r) => r.is_overall !== 1 && (r.sample_count as number) > 0);
    return {
      ...periodFields(period),
      overall: overall ? metricsOf(overall) : metricsOf({}),
      pages: pages.map((p) => ({ path: p.path as string, samples: p.sample_count as number, ...metricsOf(p) })),
    };
  },
  csv: {
    title: 'performance',
    columns: [
      { header: 'scope', value: (r: { scope: string; metric: Vital } & MetricResult) => r.scope },
      { header: 'metric', value: (r) => r.metric },
      { header: 'p75', value: (r) => r.p75 },
      { header: 'avg', value: (r) => r.avg },
      { header: 'samples', value: (r) => r.samples },
      { header: 'rating', value: (r) => r.rating },
    ],
    rows: (r: Performance) => [
      ...VITALS.map((metric) => ({ scope: '(overall)', metric, ...r.overall[metric] })),
      ...r.pages.flatMap((p) => VITALS.map((metric) => ({ scope: p.path, metric, ...p[metric] }))),
    ],
  },
});
