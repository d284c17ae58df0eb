/**
 * The embedded engine's read clients compared (`npm run bench:reads-beside [-- --events 1000000] [--rounds 30]
 * [--periods 30d,90d]`): computed dashboards (the 12 reports' requests in parallel, no answer cache) asked of three
 * apps in one process that differ only in their read client, taking turns round by round, so a host whose speed
 * drifts between runs (scripts/README.md) moves them alike: the one `npm start` wires (reads beside the chain, README
 * "Reads beside the chain", in even shares of the reads waiting, "Even shares"), the same with every read waiting in
 * one statement, and reads waiting their turn. For each period one dashboard, five at once (a third of the rounds) and
 * twenty at once (a tenth); then five dashboards of different periods at once, which share hardly a read. It prints
 * p50/p95 of the wall time and p50 of the process CPU per round.
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
// The app as npm start wires it, and two more read clients on the same engine.
const runtime = await buildNodeRuntime(config, { makeSink: (d) => createBatcher(d.rowStore, {}) });
const { deps } = runtime;
const connect = await chdbConnector(join(dataDir, 'clickhouse'));
const everyRead = await embeddedReads(connect, { readsBeside: true, evenShare: false });
const waiting = await embeddedReads(connect, { readsBeside: false });
try {
  const { key, project, register } = await benchOwner(deps.redis, 'bench-beside', 'read', Date.now());
  await register(project);
  const appWith = (clickhouse: typeof deps.clickhouse) => {
    const appDeps = { ...deps, clickhouse, answers: undefined };
    return createApp(appDeps, createServices(appDeps));
  };
  const apps: Record<string, ReturnType<typeof appWith>> = {
    'beside, even shares': appWith(deps.clickhouse),
    'beside, all waiting': appWith(everyRead.client),
    waiting: appWith(waiting.client),
  };
  const arms = Object.keys(apps);

  /** Computed dashboards at once, one of each period of `round`: the round's wall time and process CPU. */
  const dashboards = async (arm: string, round: readonly string[]) => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    const one = (period: string) => Promise.all(REPORTS.map(async (r) => {
      const res = await apps[arm]!.request(`/api/v1/projects/${DOMAIN}/${r}?period=${period}`, { headers: { Authorization: `Bearer ${key}` } });
      if (res.status !== 200) throw new Error(`${r}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }));
    await Promise.all(round.map(one));
    const used = process.cpuUsage(cpu);
    return { wall: performance.now() - start, cpu: (used.user + used.system) / 1000 };
  };

  console.log(`# embedded read clients — ${new Date().toISOString()}, node ${process.version}, ${events.toLocaleString('en')} events`);
  console.log(hostCalibrationLine());
  console.log('\ncomputed dashboards, the read clients taking turns round by round (ms; the ratio is the p50 against the first):');
  const width = Math.max(...arms.map((arm) => arm.length));
  console.log(`${'periods'.padEnd(17)}  at once  rounds  ${'read client'.padEnd(width)}  wall p50    p95  cpu p50  ratio`);
  // Dashboards of one period at once ask the same reads; five of different periods hardly any.
  const DIFFERENT = ['24h', '7d', '30d', '90d', '6m'];
  const kinds = [
    ...periods.flatMap((period) => [1, 5, 20].map((count) => ({ label: period, round: Array<string>(count).fill(period) }))),
    { label: DIFFERENT.join(','), round: DIFFERENT },
  ];
  for (const { label, round } of kinds) {
    const count = round.length;
    const n = count === 1 ? rounds : Math.max(3, Math.round(rounds / (count === 5 ? 3 : 10)));
    const taken = Object.fromEntries(arms.map((arm) => [arm, { wall: [] as number[], cpu: [] as number[] }]));
    // Each arm untimed first: the engine compiles a statement's expressions on the third sight.
    for (let i = 0; i < 3; i++) for (const arm of arms) await dashboards(arm, round);
    for (let i = 0; i < n; i++) {
      // Each round starts with the next arm, so none is always the first after another's round.
      for (let j = 0; j < arms.length; j++) {
        const arm = arms[(i + j) % arms.length]!;
        const r = await dashboards(arm, round);
        taken[arm]!.wall.push(r.wall);
        taken[arm]!.cpu.push(r.cpu);
      }
    }
    const first = percentile(taken[arms[0]!]!.wall, 50);
    for (const arm of arms) {
      const { wall, cpu } = taken[arm]!;
      const cells = [percentile(wall, 50), percentile(wall, 95), percentile(cpu, 50)].map((x) => ms(x).padStart(7)).join('');
      console.log(`${label.padEnd(17)}  ${String(count).padStart(7)}  ${String(n).padStart(6)}  ${arm.padEnd(width)}  ${cells}  ${(percentile(wall, 50) / first).toFixed(2)}`);
    }
  }
  console.log(hostCalibrationLine() + ', after the run');
} finally {
  await Promise.all([everyRead.close(), waiting.close()]);
  await runtime.close();
}
