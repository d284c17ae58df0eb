import * as v from 'valibot';
import { csvSection } from '../../export/csv.js';
import type { ResolvedPeriod } from '../../reports/periods.js';
import { periodParams, queryRows } from '../../reports/query.js';
import { recentWindowFrom } from '../../reports/sql/window.js';
import { runQuestion } from '../run.js';
import { defineEndpoint, type AnalysisContext } from './endpoint.js';

const MINUTE_MS = 60_000;
/** Who counts as "on the site now": a counted event in the last 5 minutes. */
export const REALTIME_WINDOW_MS = 5 * MINUTE_MS;
/** Minutes of the pageview series, the one holding now last. */
export const REALTIME_MINUTES = 30;
const TOP = 10;

/** A range [from, now] for the pipeline: raw events only (`buckets` are unused without time dimensions). */
function lastMs(now: number, ms: number, timeZone: string): ResolvedPeriod {
  return { key: 'custom', from: now - ms, now, to: now + 1, granularity: 'hour', bucketTimeZone: timeZone, buckets: [] };
}

// Pageviews per UTC minute start (epoch seconds); minute starts are the same in every zone of whole-minute offsets.
const PAGEVIEWS_PER_MINUTE_SQL = `SELECT toString(toUnixTimestamp(toStartOfMinute(ts))) AS minute, count() AS pageviews FROM events WHERE ${recentWindowFrom('from')} AND kind = 'pageview' GROUP BY minute`;

export const RealtimeQuery = v.object({});

export const RealtimeAnswer = v.object({
  visitors: v.pipe(v.number(), v.description('Unique visitors with a pageview, custom event or transaction in the last 5 minutes')),
  pageviews: v.pipe(
    v.array(v.object({ minute: v.pipe(v.string(), v.description('Start of the minute (ISO 8601, UTC)')), pageviews: v.number() })),
    v.description('Pageviews per minute: the minute holding now and the 29 before it, oldest first, zero-filled'),
  ),
  pages: v.pipe(v.array(v.object({ path: v.string(), visitors: v.number() })), v.description('Top 10 paths of the last 5 minutes by unique visitors')),
  sources: v.pipe(v.array(v.object({ source: v.string(), visitors: v.number() })), v.description('Top 10 visit sources of the last 5 minutes by unique visitors')),
});

export interface RealtimeResult {
  visitors: number;
  pageviews: { minute: string; pageviews: number }[];
  pages: { path: string; visitors: number }[];
  sources: { source: string; visitors: number }[];
}

/**
 * Who is on the site now. Visitors, pages and sources are pipeline questions over [now − 5 min,
 * now] (a visit there is its events inside the window, its source that of its first one); the
 * minute series reads only the last 30 minutes of raw pageviews. Four small queries, run together.
 */
export async function runRealtime(ctx: AnalysisContext): Promise<RealtimeResult> {
  const { deps, project } = ctx;
  const now = deps.clock.now();
  const recent = lastMs(now, REALTIME_WINDOW_MS, project.timeZone);
  const firstMinute = Math.floor(now / MINUTE_MS) * MINUTE_MS - (REALTIME_MINUTES - 1) * MINUTE_MS;
  const series = lastMs(now, now - firstMinute, project.timeZone);
  const noFilters = { filters: [] };
  const [total, pages, sources, minutes] = await Promise.all([
    runQuestion(deps, project.id, recent, { metrics: ['visitors'], dimensions: [], ...noFilters }),
    runQuestion(deps, project.id, recent, { metrics: ['visitors'], dimensions: ['page'], ...noFilters, limit: TOP }),
    runQuestion(deps, project.id, recent, { metrics: ['visitors'], dimensions: ['source'], ...noFilters, limit: TOP }),
    queryRows(deps, PAGEVIEWS_PER_MINUTE_SQL, periodParams(project.id, series, { daily: false }), { minute: 'number', pageviews: 'number' }),
  ]);
  const perMinute = new Map(minutes.map((m) => [m.minute * 1000, m.pageviews]));
  return {
    visitors: Number(total[0]?.visitors ?? 0),
    pageviews: Array.from({ length: REALTIME_MINUTES }, (_, i) => {
      const start = firstMinute + i * MINUTE_MS;
      return { minute: new Date(start).toISOString(), pageviews: perMinute.get(start) ?? 0 };
    }),
    pages: pages.map((r) => ({ path: String(r.page), visitors: Number(r.visitors) })),
    sources: sources.map((r) => ({ source: String(r.source), visitors: Number(r.visitors) })),
  };
}

/** CSV: four sections (visitors now, pageviews per minute, top pages, top sources). */
function realtimeCsv(answer: RealtimeResult): string {
  return (
    csvSection('realtime visitors (last 5 minutes)', [{ header: 'visitors', value: (r: RealtimeResult) => r.visitors }], [answer]) +
    csvSection('pageviews per minute (last 30 minutes)', [{ header: 'minute', value: (r: RealtimeResult['pageviews'][number]) => r.minute }, { header: 'pageviews', value: (r) => r.pageviews }], answer.pageviews) +
    csvSection('top pages (last 5 minutes)', [{ header: 'path', value: (r: RealtimeResult['pages'][number]) => r.path }, { header: 'visitors', value: (r) => r.visitors }], answer.pages) +
    csvSection('top sources (last 5 minutes)', [{ header: 'source', value: (r: RealtimeResult['sources'][number]) => r.source }, { header: 'visitors', value: (r) => r.visitors }], answer.sources)
  );
}

/** GET /:domain/realtime */
export const realtimeEndpoint = defineEndpoint({
  name: 'realtime',
  method: 'GET',
  // Its window ends at now and starts 30 minutes before: the rows in it change with the clock alone.
  answerCache: false,
  path: '/:domain/realtime',
  summary: 'Realtime: visitors, pages and sources of the last minutes',
  description:
    'Unique visitors of the last 5 minutes (any pageview, custom event or transaction), pageviews per minute for the last 30 ' +
    'minutes (30 entries, oldest first, zero-filled), and the top 10 pages and visit sources of the last 5 minutes by visitors.',
  input: RealtimeQuery,
  response: RealtimeAnswer,
  run: (ctx) => runRealtime(ctx),
  csv: realtimeCsv,
});
