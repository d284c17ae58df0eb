/**
 * Analysis benchmark (`npm run bench:reports [-- --scale 0.1] [--shape bulk|live] [--runs 20]
 * [--periods 30d,90d] [--groups unfiltered,filtered,breakdown,query] [--breakdown-periods 30d]
 * [--dimensions page,source,…] [--via pipeline|http]`).
 *
 * Times the analysis pipeline over two shapes of the same volume (10M events in the main project
 * and 40M in 49 others, times `--scale`): `bulk` (scripts/gen-events.ts: a few huge INSERT …
 * SELECT, merged with OPTIMIZE FINAL) and `live` (scripts/gen-live-events.ts: 50,000-row inserts
 * through the write port, projects interleaved, realistic visits). The embedded engine opens one
 * data directory per process, so without `--shape` this script runs itself once per shape.
 *
 * Figures (p50 and p95 of `--runs` runs after a warm-up) per period:
 * - unfiltered stats, timeseries, pages, referrers, countries: the fixed report through the HTTP
 *   app (rollups; the targets of issue 4) beside the same question answered by the pipeline;
 * - the same five questions with a visit-level filter (source is the most common external
 *   source) and an event-level one (page is the most common page);
 * - a breakdown per dimension (1 dimension; visitors, pageviews, bounceRate);
 * - a `POST query` question with two dimensions and a filter.
 * Each figure prints its target, PASS/MISS (p50 against the target), p50 ÷ target, the
 * process CPU time per call (engine threads included: on a shared machine wall times stretch
 * with the neighbours' load, CPU time much less) and the first ask's time (the warm-up): the
 * stored visits of closed hours are emptied at the start, so a figure's first ask pays the whole
 * pass unless an earlier figure's question summed the same part; its part is summed before the
 * timed runs, which are the asks a user repeats within the day.
 *
 * Environment: BENCH_REDIS_URL (default redis://127.0.0.1:6379/10; only bench keys are written).
 */
import { spawnSync } from 'node:child_process';
import { fixedClock } from '../src/adapters/clock.js';
import { createApp } from '../src/app.js';
import { runQuestion, type Question } from '../src/analysis/run.js';
import { EVENT_DIMENSIONS, METRICS, VISIT_DIMENSIONS, type Dimension, type Filter } from '../src/analysis/question.js';
import { createAccount, createApiKey } from '../src/auth/store.js';
import { parseConfig } from '../src/config.js';
import { buildNodeRuntime } from '../src/entry/node-deps.js';
import { directSink } from '../src/ingest/direct-sink.js';
import { ProjectKeys, saveProject, type Project } from '../src/projects/store.js';
import { resolvePeriod, type PeriodKey, type ResolvedPeriod } from '../src/reports/periods.js';
import { hostCalibrationLine } from './bench-host.js';
import { argValue, benchDataDir, ensureBenchData, MAIN_PROJECT_ID, scaleArg, type BenchMeta } from './gen-events.js';
import { ensureLiveBenchData, liveBenchDataDir, MAIN_DOMAIN } from './gen-live-events.js';
import { intArg, loadLine, ms, percentile, printTable, timeRunsWithCpu } from './bench-timing.js';

const SHAPES = ['bulk', 'live'] as const;
type Shape = (typeof SHAPES)[number];
const GROUPS = ['unfiltered', 'filtered', 'breakdown', 'query'] as const;
type Group = (typeof GROUPS)[number];

/** Targets (ms, p50) by group and period; no entry = measured without a target. */
const TARGETS: Readonly<Record<string, number>> = {
  'report:stats:30d': 25, 'report:timeseries:30d': 25, 'report:30d': 50, 'report:90d': 120, // issue 4 (rollups)
  'filtered:30d': 100, 'filtered:90d': 250,
  'breakdown:30d': 100,
  'query:30d': 300,
};

/**
 * One thing the analysis routes will be asked, kept in both forms: the HTTP request the route
 * will take and the question the pipeline answers for it.
 */
interface AnalysisAsk {
  /** `GET /stats?period=30d&filters=…`, `POST /query` … relative to `/api/v1/projects/{domain}`. */
  route: string;
  body?: unknown;
  period: ResolvedPeriod;
  question: Question;
}

/** A figure to time: its label, target key and the call to repeat. */
interface Figure {
  group: Group;
  name: string;
  period: PeriodKey;
  target?: number;
  run: () => Promise<unknown>;
}

const filtersText = (filters: readonly Filter[]) => filters.map((f) => `${f.dimension}${f.op === 'is' ? '==' : f.op === 'is_not' ? '!=' : '~='}${f.values.join('|')}`).join(';');
const query = (params: Record<string, string>) => new URLSearchParams(params).toString().replaceAll('%2C', ',');

/** The five report questions (the filtered report routes will ask these of the pipeline). */
function reportAsks(period: ResolvedPeriod, filters: readonly Filter[]): { name: string; ask: AnalysisAsk }[] {
  const f: Record<string, string> = filters.length ? { filters: filtersText(filters) } : {};
  const ask = (name: string, question: Omit<Question, 'filters'>) => ({
    name,
    ask: { route: `/${name}?${query({ period: period.key, ...f })}`, period, question: { ...question, filters } },
  });
  return [
    ask('stats', { metrics: METRICS, dimensions: [] }),
    ask('timeseries', { metrics: ['pageviews', 'visitors'], dimensions: ['time:day'] }),
    ask('pages', { metrics: ['pageviews', 'visitors'], dimensions: ['page'], limit: 10 }),
    ask('referrers', { metrics: ['pageviews', 'visitors'], dimensions: ['source'], limit: 10 }),
    ask('countries', { metrics: ['pageviews', 'visitors'], dimensions: ['country'], limit: 10 }),
  ];
}

/** `GET /breakdown`: one dimension, the breakdown's metrics. */
function breakdownAsk(period: ResolvedPeriod, dimension: Dimension): AnalysisAsk {
  const metrics = ['visitors', 'pageviews', 'bounceRate'] as const;
  return {
    route: `/breakdown?${query({ period: period.key, dimension, metrics: metrics.join(','), limit: '10' })}`,
    period,
    question: { metrics, dimensions: [dimension], filters: [], limit: 10 },
  };
}

/** `POST /query`: two dimensions (visit- and event-level) and a visit-level filter. */
function queryAsk(period: ResolvedPeriod, filters: readonly Filter[]): AnalysisAsk {
  const question: Question = { metrics: ['visitors', 'pageviews', 'bounceRate'], dimensions: ['source', 'page'], filters, limit: 100 };
  const body = { period: period.key, metrics: question.metrics, dimensions: question.dimensions, filters: filters.map((f) => [f.op, f.dimension, f.values]), limit: question.limit };
  return { route: '/query', body, period, question };
}

async function measureShape(shape: Shape) {
  const scale = scaleArg();
  const runs = intArg('runs', 20);
  const periodKeys = (argValue('periods') ?? '30d,90d').split(',') as PeriodKey[];
  const breakdownPeriods = (argValue('breakdown-periods') ?? '30d').split(',') as PeriodKey[];
  const groups = (argValue('groups')?.split(',') ?? GROUPS) as Group[];
  const breakdownDimensions = (argValue('dimensions')?.split(',') ?? [...EVENT_DIMENSIONS, ...VISIT_DIMENSIONS]) as Dimension[];
  const dataDir = shape === 'bulk' ? benchDataDir(scale) : liveBenchDataDir(scale);
  const clock = fixedClock(Date.now());
  const config = parseConfig({
    DATA_DIR: dataDir,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/10',
    // The benchmark issues thousands of requests a minute; the limits are not what it measures.
    RATE_LIMIT_API_PER_MIN: '100000000',
    RETENTION_DAYS: '3650',
  });
  const runtime = await buildNodeRuntime(config, { clock, makeSink: (d) => directSink(d.rowStore) });
  const { deps } = runtime;
  try {
    console.log(`\n===== shape: ${shape} (${dataDir}) =====`);
    const generation = Date.now();
    const meta: BenchMeta = shape === 'bulk'
      ? await ensureBenchData(deps.clickhouse, dataDir, scale)
      : await ensureLiveBenchData(deps.clickhouse, deps.rowStore, dataDir, scale);
    if (Date.now() - generation > 10_000) console.log(`data generation took ${((Date.now() - generation) / 1000).toFixed(0)} s`);
    clock.set(meta.now);
    // Parts of closed hours summed by an earlier run (the clock stands at the same instant) would make every ask a repeated one.
    await deps.clickhouse.command({ query: 'TRUNCATE TABLE IF EXISTS visit_parts' });

    const now = clock.now();
    const account = await createAccount(deps.redis, { email: `bench-${now}-${process.pid}@bench.example` }, now);
    const { key } = await createApiKey(deps.redis, { accountId: account.id, scope: 'read', name: 'bench' }, now);
    const project: Project = {
      id: MAIN_PROJECT_ID, name: 'Bench', domain: MAIN_DOMAIN, timeZone: 'UTC', publicStatsEnabled: false,
      brandColor: null, icon: null, createdAt: new Date(now).toISOString(), ownerId: account.id,
    };
    await saveProject(deps.redis, project);
    await deps.redis.set(ProjectKeys.domain(MAIN_DOMAIN), project.id);
    await deps.redis.hset(ProjectKeys.members(project.id), { [account.id]: 'owner' });
    // Without the answer cache: every request is computed (the clock stands still here, so the
    // cache would answer all but the first run of each figure; bench:dashboard measures it).
    const app = createApp({ ...deps, answers: undefined });
    const http = async (route: string, body?: unknown) => {
      const init: RequestInit = { headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) } };
      if (body) Object.assign(init, { method: 'POST', body: JSON.stringify(body) });
      const res = await app.request(`/api/v1/projects/${MAIN_DOMAIN}${route}`, init);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${route}: ${res.status} ${text}`);
      return text;
    };
    /**
     * How a figure reaches the pipeline: `--via http` sends the route's request through the app
     * (auth, validation, range, pipeline, JSON); `--via pipeline` (default) calls runQuestion
     * directly with the question the route asks, which isolates the query from the HTTP layer.
     */
    const via = argValue('via') ?? 'pipeline';
    if (via !== 'http' && via !== 'pipeline') throw new Error('--via must be http or pipeline');
    const answer = (a: AnalysisAsk) => (via === 'http' ? http(a.route, a.body) : runQuestion(deps, MAIN_PROJECT_ID, a.period, a.question));

    console.log(hostCalibrationLine());
    console.log(loadLine());
    const periods = new Map(periodKeys.map((k) => [k, resolvePeriod(k, 'UTC', now)]));
    const p30 = resolvePeriod('30d', 'UTC', now);
    // The filter values: the most common external source and page of the last 30 days.
    const [sources, pages, countries, totals] = await Promise.all([
      runQuestion(deps, MAIN_PROJECT_ID, p30, { metrics: ['visitors'], dimensions: ['source'], filters: [], limit: 2 }),
      runQuestion(deps, MAIN_PROJECT_ID, p30, { metrics: ['pageviews'], dimensions: ['page'], filters: [], limit: 1 }),
      runQuestion(deps, MAIN_PROJECT_ID, p30, { metrics: ['visitors'], dimensions: ['country'], filters: [], limit: 1 }),
      runQuestion(deps, MAIN_PROJECT_ID, p30, { metrics: METRICS, dimensions: [], filters: [] }),
    ]);
    const source = String(sources.find((r) => r.source !== '(direct)')?.source);
    const page = String(pages[0]?.page);
    const country = String(countries[0]?.country);
    const filters: Filter[] = [
      { op: 'is', dimension: 'source', values: [source] },
      { op: 'is', dimension: 'page', values: [page] },
    ];
    console.log(`scale ${scale}: ${meta.mainEvents.toLocaleString('en')} events in ${MAIN_PROJECT_ID}, ${meta.otherEvents.toLocaleString('en')} in 49 others (generated in ${meta.generatedInSeconds} s)`);
    console.log(`30d unfiltered: ${JSON.stringify(totals[0])}`);
    console.log(`filters: source==${source} (visit-level) AND page==${page} (event-level); ${runs} runs each after a warm-up; analysis figures via ${via}${via === 'http' ? ' (the app without its answer cache: every answer computed)' : ''}\n`);

    const figures: Figure[] = [];
    const target = (k: string) => TARGETS[k];
    for (const [key, period] of periods) {
      if (groups.includes('unfiltered')) {
        for (const { name, ask } of reportAsks(period, [])) {
          figures.push({ group: 'unfiltered', name: `${name} (report route)`, period: key, target: target(`report:${name}:${key}`) ?? target(`report:${key}`), run: () => http(ask.route) });
          figures.push({ group: 'unfiltered', name: `${name} (as a question)`, period: key, run: () => answer(ask) });
        }
      }
      if (groups.includes('filtered')) {
        for (const { name, ask } of reportAsks(period, filters)) figures.push({ group: 'filtered', name, period: key, target: target(`filtered:${key}`), run: () => answer(ask) });
      }
      if (groups.includes('query')) figures.push({ group: 'query', name: `source × page, country==${country}`, period: key, target: target(`query:${key}`), run: () => answer(queryAsk(period, [{ op: 'is', dimension: 'country', values: [country] }])) });
    }
    if (groups.includes('breakdown')) {
      for (const key of breakdownPeriods) {
        const period = periods.get(key) ?? resolvePeriod(key, 'UTC', now);
        for (const d of breakdownDimensions) figures.push({ group: 'breakdown', name: d, period: key, target: target(`breakdown:${key}`), run: () => answer(breakdownAsk(period, d)) });
      }
    }

    const header = ['group', 'figure', 'period', 'p50', 'p95', 'target', 'result', 'p50/target', 'p95/target', 'cpu p50', 'first ask'];
    const rows: string[][] = [];
    const misses: string[] = [];
    for (const f of figures) {
      // The first ask (the warm-up) may sum a part of closed hours after answering: timed apart, its work done before the runs.
      const { wall: t, cpu, first } = await timeRunsWithCpu(runs, f.run, () => deps.background?.settled());
      const p50 = percentile(t, 50);
      const p95 = percentile(t, 95);
      const verdict = f.target === undefined ? '' : p50 <= f.target ? 'PASS' : 'MISS';
      rows.push([f.group, f.name, f.period, ms(p50), ms(p95), f.target === undefined ? '—' : String(f.target), verdict, f.target ? `${(p50 / f.target).toFixed(2)}×` : '', f.target ? `${(p95 / f.target).toFixed(2)}×` : '', ms(percentile(cpu, 50)), ms(first)]);
      console.error(`  … ${rows.at(-1)!.join(' ')}`);
      if (verdict === 'MISS') misses.push(`${f.group} ${f.name} ${f.period}: p50 ${ms(p50)} ms > ${f.target} ms (${(p50 / f.target!).toFixed(2)}×)`);
    }
    console.log(`shape ${shape}, scale ${scale}:`);
    printTable(header, rows, 3);
    console.log(loadLine());
    console.log(hostCalibrationLine());
    console.log(misses.length ? `MISSED (${misses.length} of ${rows.filter((r) => r[6]).length}):\n  ${misses.join('\n  ')}` : 'all targets met');
    if (misses.length && process.argv.includes('--strict')) process.exitCode = 1;
  } finally {
    await runtime.close();
  }
}

const shapeArg = argValue('shape');
if (shapeArg !== undefined) {
  if (!(SHAPES as readonly string[]).includes(shapeArg)) throw new Error(`--shape must be one of ${SHAPES.join(', ')}`);
  await measureShape(shapeArg as Shape);
} else {
  // One process per shape: the embedded engine keeps one data directory per process.
  let failed = 0;
  for (const shape of SHAPES) {
    const run = spawnSync(process.execPath, ['--import', 'tsx', process.argv[1]!, ...process.argv.slice(2), '--shape', shape], { stdio: 'inherit' });
    if (run.status !== 0) failed++;
  }
  process.exit(failed ? 1 : 0);
}
