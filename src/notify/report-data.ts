import { runQuestion } from '../analysis/run.js';
import type { Deps } from '../deps.js';
import type { Project } from '../projects/store.js';
import { measureGoals } from '../reports/defs/goals.js';
import type { ResolvedPeriod } from '../reports/periods.js';
import { periodParams, queryOne, queryRows } from '../reports/query.js';
import { COUNTRIES_SQL } from '../reports/sql/countries.js';
import { PAGES_SQL } from '../reports/sql/pages.js';
import { STATS_SQL } from '../reports/sql/stats.js';
import type { ReportFrequency, ReportSpan } from './report-periods.js';

/** Rows in each top list of the email. */
export const TOP_N = 5;

export interface HeadlineNumbers {
  visitors: number;
  pageviews: number;
  sessions: number;
  bounceRate: number | null;
  visitDurationSeconds: number | null;
}

export interface TopRow {
  name: string;
  visitors: number;
  pageviews: number;
}

export interface GoalLine {
  name: string;
  /** Unique visitors who converted. */
  conversions: number;
  previousConversions: number;
  conversionRate: number | null;
}

/** Everything one email report shows, before it is rendered. */
export interface ReportData {
  domain: string;
  projectName: string;
  timeZone: string;
  frequency: ReportFrequency;
  span: ReportSpan;
  current: HeadlineNumbers;
  previous: HeadlineNumbers;
  pages: TopRow[];
  sources: TopRow[];
  countries: TopRow[];
  goals: GoalLine[];
}

/** A period of the report queries for an arbitrary span (both ends on local midnights, so 15-minute aligned). */
const spanPeriod = (from: number, to: number, timeZone: string): ResolvedPeriod => ({ key: '7d', from, to, now: to - 1, granularity: 'day', bucketTimeZone: timeZone, buckets: [] });

async function headline(deps: Deps, project: Project, from: number, to: number): Promise<HeadlineNumbers> {
  const period = spanPeriod(from, to, project.timeZone);
  // As the stats report answers them: the rollup for the counts, the pipeline for the per-visit metrics.
  const [stats, [visits]] = await Promise.all([
    queryOne(deps, STATS_SQL.rollup, periodParams(project.id, period), { pageviews: 'number', visitors: 'number', sessions: 'number' }),
    runQuestion(deps, project.id, period, { metrics: ['bounceRate', 'avgDurationSeconds'], dimensions: [], filters: [] }),
  ]);
  return {
    visitors: stats.visitors,
    pageviews: stats.pageviews,
    sessions: stats.sessions,
    bounceRate: (visits?.bounceRate as number | null | undefined) ?? null,
    visitDurationSeconds: (visits?.avgDurationSeconds as number | null | undefined) ?? null,
  };
}

/**
 * Gathers a report over `span`: the headline numbers of it and of the span before, and the top
 * pages, sources (by visit) and countries, ranked by pageviews like those reports and the top conversion goals (event and pageview goals, by
 * unique conversions).
 */
export async function gatherReport(deps: Deps, project: Project, frequency: ReportFrequency, span: ReportSpan): Promise<ReportData> {
  const period = spanPeriod(span.from, span.to, project.timeZone);
  const params = { ...periodParams(project.id, period), limit: TOP_N };
  const [current, previous, pages, sources, countries, goals, previousGoals] = await Promise.all([
    headline(deps, project, span.from, span.to),
    headline(deps, project, span.previousFrom, span.previousTo),
    queryRows(deps, PAGES_SQL.rollup, params, { path: 'string', pageviews: 'number', visitors: 'number' }),
    // Sources by visit, as the referrers report ranks them.
    runQuestion(deps, project.id, period, { metrics: ['pageviews', 'visitors'], dimensions: ['source'], filters: [], limit: TOP_N }),
    queryRows(deps, COUNTRIES_SQL.rollup, params, { country: 'string', pageviews: 'number', visitors: 'number' }),
    measureGoals(deps, project.id, period),
    measureGoals(deps, project.id, spanPeriod(span.previousFrom, span.previousTo, project.timeZone)),
  ]);
  const before = new Map(previousGoals.map((g) => [g.id, g.current]));
  const conversionGoals = goals
    .filter((g) => g.category === 'conversion')
    .sort((a, b) => b.current - a.current || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, TOP_N)
    .map((g) => ({ name: g.name, conversions: g.current, previousConversions: before.get(g.id) ?? 0, conversionRate: g.conversionRate }));
  return {
    domain: project.domain,
    projectName: project.name,
    timeZone: project.timeZone,
    frequency,
    span,
    current,
    previous,
    pages: pages.map((r) => ({ name: r.path, visitors: r.visitors, pageviews: r.pageviews })),
    sources: sources.map((r) => ({ name: String(r.source), visitors: Number(r.visitors), pageviews: Number(r.pageviews) })),
    countries: countries.map((r) => ({ name: r.country, visitors: r.visitors, pageviews: r.pageviews })),
    goals: conversionGoals,
  };
}
