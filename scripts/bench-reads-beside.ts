/**
 * Reads beside the chain, measured against reads waiting their turn (`npm run bench:reads-beside [-- --events 1000000]
 * [--rounds 30] [--periods 30d,90d]`): computed dashboards (the 12 reports' requests in parallel, no answer cache) asked
 * of two apps in one process that differ only in their read client (README "Reads beside the chain"), alternating
 * round by round, so a host whose speed drifts between runs (scripts/README.md) moves both alike. One dashboard, then
 * five at once (a third of the rounds); p50/p95 of the wall time and p50 of the process CPU per round.
 *
 * Reads the store `npm run bench:dashboard` imported (`.bench-data/dashboard-<events>`; run that first) and registers
 * its project in Redis db 10 (BENCH_REDIS_URL) with a new key.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { embeddedReads, chdbConnector } from '../src/adapters/node-clickhouse.js';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { buildNodeRuntime } from '../src/entry/node-deps.js';
import { createBatcher } from '../src/ingest/batcher.js';
import { createServices } from '../src/services.js';
import { hostCalibrationLine } from './bench-host.js';
import { BENCH_DOMAIN as DOMAIN, benchOwner } from './bench-project.js';
import { argValue } from './gen-events.js';
import { intArg, ms, percentile } from './bench-timing.js';

const REPORTS = ['stats', 'timeseries', 'pages', 'referrers', 'countries', 'cities', 'devices', 'browsers', 'os', 'events', 'visitors', 'performance'];

const events = intArg('events', 1_000_000);
const rounds = intArg('rounds', 30);
const periods = (argValue('periods') ?? '30d,90d').split(',');
const dataDir = resolve('.bench-data', `dashboard-${events}`);
if (!existsSync(join(dataDir, 'bench-dashboard.json'))) {
  console.error(`no store in ${dataDir}: run \`npm run bench:dashboard -- --events ${events} --import-only\` first`);
  process.exit(1);
}

const config = parseConfig({ DATA_DIR: dataDir, REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/10', RATE_LIMIT_API_PER_MIN: '100000000', RETENTION_DAYS: '3650' });
// The app as npm start wires it (reads beside the chain on), and a second read client on the same engine with it off.
const runtime = await buildNodeRuntime(config, { makeSink: (d) => createBatcher(d.rowStore, {}) });
const { deps } = runtime;
const waiting = await embeddedReads(await chdbConnector(join(dataDir, 'clickhouse')), { readsBeside: false });
try {
  const { key, project, register } = await benchOwner(deps.redis, 'bench-beside', 'read', Date.now());
  await register(project);
  const appWith = (clickhouse: typeof deps.clickhouse) => {
    const appDeps = { ...deps, clickhouse, answers: undefined };
    return createApp(appDeps, createServices(appDeps));
  };
  const apps = { beside: appWith(deps.clickhouse), waiting: appWith(waiting.client) };
  type Arm = keyof typeof apps;

  /** `count` computed dashboards of `period` at once: the round's wall time and process CPU. */
  const dashboards = async (arm: Arm, period: string, count: number) => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const one = () => Promise.all(REPORTS.map(async (r) => {
      const res = await apps[arm].request(`/api/v1/projects/${DOMAIN}/${r}?period=${period}`, { headers: { Authorization: `Bearer ${key}` } });
      if (res.status !== 200) throw new Error(`${r}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }));
    await Promise.all(Array.from({ length: count }, one));
    const used = process.cpuUsage(cpu);
    return { wall: performance.now() - start, cpu: (used.user + used.system) / 1000 };
  };

  console.log(`# reads beside the chain — ${new Date().toISOString()}, node ${process.version}, ${events.toLocaleString('en')} events`);
  console.log(hostCalibrationLine());
  console.log('\ncomputed dashboards, the two read clients alternating round by round (ms):');
  console.log('period  at once  rounds  waiting p50    p95  cpu p50  beside p50    p95  cpu p50  beside / waiting (p50)');
  for (const period of periods) {
    for (const count of [1, 5]) {
      const n = count === 1 ? rounds : Math.max(3, Math.round(rounds / 3));
      const taken: Record<Arm, { wall: number[]; cpu: number[] }> = { beside: { wall: [], cpu: [] }, waiting: { wall: [], cpu: [] } };
      // Each arm once untimed first: the engine compiles a statement's expressions on the third sight.
      for (let i = 0; i < 3; i++) for (const arm of ['waiting', 'beside'] as const) await dashboards(arm, period, count);
      for (let i = 0; i < n; i++) {
        for (const arm of (i % 2 ? ['waiting', 'beside'] : ['beside', 'waiting']) as Arm[]) {
          const r = await dashboards(arm, period, count);
          taken[arm].wall.push(r.wall);
          taken[arm].cpu.push(r.cpu);
        }
      }
      const cells = (arm: Arm) => [percentile(taken[arm].wall, 50), percentile(taken[arm].wall, 95), percentile(taken[arm].cpu, 50)].map((x) => ms(x).padStart(7));
      const ratio = percentile(taken.beside.wall, 50) / percentile(taken.waiting.wall, 50);
      console.log(`${period.padEnd(6)}  ${String(count).padStart(7)}  ${String(n).padStart(6)}  ${cells('waiting').join('')}  ${cells('beside').join('')}  ${ratio.toFixed(2)}`);
    }
  }
  console.log(hostCalibrationLine() + ', after the run');
} finally {
  await waiting.close();
  await runtime.close();
}
