/**
 * Fixed-report benchmark (`npm run bench:rollups [-- --scale 0.1] [--runs 20] [--raw-runs 20] [--reports devices,pages]`).
 *
 * Loads (or generates, see scripts/gen-events.ts) 10M events for one project and 40M for 49
 * others, then times every registry report that takes a period over 24h, today, 7d, 30d and 90d through the
 * HTTP API (in-process `app.request`: auth, rate limit, validation, planner, query, JSON), and
 * the same question answered from raw events (the planner's raw path, `compute(…, 'raw')`).
 * Prints report × period × {source, api p50, api p95, raw p50, raw/api}, the export timings,
 * and the targets of issue 4 with PASS/MISS.
 *
 * Environment: BENCH_REDIS_URL (default redis://127.0.0.1:6379/10; only bench keys are written).
 */
import * as v from 'valibot';
import { fixedClock } from '../src/adapters/clock.js';
import { createApp } from '../src/app.js';
import { createAccount, createApiKey } from '../src/auth/store.js';
import { parseConfig } from '../src/config.js';
import { buildNodeRuntime } from '../src/entry/node-deps.js';
import { directSink } from '../src/ingest/direct-sink.js';
import { ProjectKeys, saveProject, type Project } from '../src/projects/store.js';
import type { ReportContext, ReportDefinition } from '../src/reports/definition.js';
import type { PlannedReport } from '../src/reports/planned.js';
import { planSource } from '../src/reports/planner.js';
import { reports } from '../src/reports/registry.js';
import type { PeriodKey } from '../src/reports/periods.js';
import { argValue, benchDataDir, ensureBenchData, MAIN_PROJECT_ID, scaleArg } from './gen-events.js';
import { hostCalibrationLine } from './bench-host.js';
import { intArg, ms, percentile, printTable, timeRuns } from './bench-timing.js';

const PERIODS = ['24h', 'today', '7d', '30d', '90d'] as const satisfies readonly PeriodKey[];
const BENCH_DOMAIN = 'bench-main.example';

/** Targets of issue 4 (ms). */
const TARGETS = { p50_30d: 50, p50_90d: 120, headline_30d: 25, export: 300 };
const HEADLINE = ['stats', 'timeseries'];

const isPlanned = (def: ReportDefinition): def is PlannedReport => typeof (def as Partial<PlannedReport>).compute === 'function';

async function main() {
  const scale = scaleArg();
  const runs = intArg('runs', 20);
  const rawRuns = intArg('raw-runs', runs);
  const clock = fixedClock(Date.now());
  const config = parseConfig({
    DATA_DIR: benchDataDir(scale),
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/10',
    // The benchmark issues thousands of requests a minute; the limits are not what it measures.
    RATE_LIMIT_API_PER_MIN: '100000000',
    RATE_LIMIT_EXPORT_PER_MIN: '100000000',
    RETENTION_DAYS: '3650',
  });
  const runtime = await buildNodeRuntime(config, { clock, makeSink: (d) => directSink(d.rowStore) });
  const { deps } = runtime;
  try {
    const meta = await ensureBenchData(deps.clickhouse, config.DATA_DIR, scale);
    clock.set(meta.now);

    // Identity and the project record in Redis; the project keeps the fixed id the events carry.
    const now = clock.now();
    const account = await createAccount(deps.redis, { email: `bench-${now}-${process.pid}@bench.example` }, now);
    const { key } = await createApiKey(deps.redis, { accountId: account.id, scope: 'read', name: 'bench' }, now);
    const project: Project = {
      id: MAIN_PROJECT_ID, name: 'Bench', domain: BENCH_DOMAIN, timeZone: 'UTC', publicStatsEnabled: false,
      brandColor: null, icon: null, createdAt: new Date(now).toISOString(), ownerId: account.id,
    };
    await saveProject(deps.redis, project);
    await deps.redis.set(ProjectKeys.domain(BENCH_DOMAIN), project.id);
    await deps.redis.hset(ProjectKeys.members(project.id), { [account.id]: 'owner' });

    const app = createApp(deps);
    const ctx: ReportContext = { deps, project, role: 'owner' };
    const call = async (path: string) => {
      const res = await app.request(`/api/v1/projects/${BENCH_DOMAIN}${path}`, { headers: { Authorization: `Bearer ${key}` } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`);
      return body;
    };

    console.log(hostCalibrationLine());
    console.log(`\nscale ${scale}: ${meta.mainEvents.toLocaleString('en')} events in ${MAIN_PROJECT_ID}, ${meta.otherEvents.toLocaleString('en')} in 49 others; ${runs} API runs, ${rawRuns} raw runs each\n`);
    const header = ['report', 'period', 'source', 'api p50', 'api p95', 'raw p50', 'raw/api', 'rollup p50 (when raw is planned)'];
    const rows: string[][] = [];
    const misses: string[] = [];
    // `--reports devices,pages` times only those (the export is always timed).
    const only = argValue('reports')?.split(',');
    const periodReports = reports.filter((d) => !d.params && (!only || only.includes(d.name)));
    for (const def of periodReports) {
      for (const period of PERIODS) {
        const parsed = v.safeParse(def.query, { period });
        if (!parsed.success) {
          rows.push([def.name, period, 'n/a (period not offered)', '', '', '', '', '']);
          continue;
        }
        const route = def.path.replace('/:domain', '');
        const api = await timeRuns(runs, () => call(`${route}?period=${period}`));
        const source = isPlanned(def) ? planSource(def.name, period) : 'fixed';
        const raw = isPlanned(def) ? await timeRuns(rawRuns, () => def.compute(ctx, parsed.output, 'raw')) : undefined;
        // When the planner reads raw events, the rollup's time is what justifies the choice.
        const rollup = isPlanned(def) && source === 'raw' ? await timeRuns(rawRuns, () => def.compute(ctx, parsed.output, 'rollup')) : undefined;
        const apiP50 = percentile(api, 50);
        const rawP50 = raw && percentile(raw, 50);
        const rollupP50 = rollup && percentile(rollup, 50);
        rows.push([def.name, period, source, ms(apiP50), ms(percentile(api, 95)), ms(rawP50), rawP50 ? `${(rawP50 / apiP50).toFixed(1)}×` : '—', ms(rollupP50)]);
        console.error(`  … ${rows.at(-1)!.join(' ')}`);
        const limit = period === '90d' ? TARGETS.p50_90d : period === '30d' ? (HEADLINE.includes(def.name) ? TARGETS.headline_30d : TARGETS.p50_30d) : undefined;
        if (limit !== undefined && apiP50 > limit) misses.push(`${def.name} ${period}: api p50 ${ms(apiP50)} ms > ${limit} ms`);
        if (source === 'rollup' && rawP50 !== undefined && rawP50 < apiP50) misses.push(`${def.name} ${period}: raw ${ms(rawP50)} ms faster than api ${ms(apiP50)} ms`);
        if (source === 'raw' && rollupP50 !== undefined && rawP50 !== undefined && rollupP50 < rawP50) {
          misses.push(`${def.name} ${period}: planner reads raw (${ms(rawP50)} ms) but the rollup took ${ms(rollupP50)} ms`);
        }
      }
    }
    // What every request costs before any report runs: auth, rate limit and project lookup in Redis.
    const overhead = await timeRuns(runs, () => call(''));
    rows.push(['(api overhead: GET project)', '', '', ms(percentile(overhead, 50)), ms(percentile(overhead, 95)), '', '', '']);
    printTable(header, rows);

    console.log('\nexport (all sections, limit 100):');
    const exportRows: string[][] = [];
    for (const period of PERIODS) {
      const t = await timeRuns(runs, () => call(`/export?period=${period}&limit=100`));
      exportRows.push([period, ms(percentile(t, 50)), ms(percentile(t, 95))]);
      if (percentile(t, 50) > TARGETS.export) misses.push(`export ${period}: p50 ${ms(percentile(t, 50))} ms > ${TARGETS.export} ms`);
    }
    printTable(['period', 'p50', 'p95'], exportRows);

    const skipped = reports.filter((d) => d.params).map((d) => d.name);
    if (skipped.length) console.log(`\nnot timed (need an id beyond the domain): ${skipped.join(', ')}`);
    console.log(
      `\ntargets: p50 ≤ ${TARGETS.p50_30d} ms (30d), ≤ ${TARGETS.p50_90d} ms (90d); stats/timeseries ≤ ${TARGETS.headline_30d} ms (30d); ` +
        `never slower than raw; export ≤ ${TARGETS.export} ms`,
    );
    console.log(misses.length ? `MISSED (${misses.length}):\n  ${misses.join('\n  ')}` : 'all targets met');
    if (misses.length && process.argv.includes('--strict')) process.exitCode = 1;
  } finally {
    await runtime.close();
  }
}

await main();
