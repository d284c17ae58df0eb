/**
 * `npm run bench`: every benchmark in turn, each in its own process (the embedded ClickHouse
 * allows one data directory per process). Pass names to run a subset: `npm run bench -- reports`.
 * Extra flags after `--` go to each script (e.g. `--scale 0.1` for a quick reports run): `reports` is the analysis pipeline over both data
 * shapes (scripts/bench-analysis.ts), `rollups` every fixed report from the rollups (scripts/bench-reports.ts), `dashboard`
 * what a dashboard waits for on imported events (scripts/bench-dashboard.ts).
 */
import { spawnSync } from 'node:child_process';

const BENCHES = {
  projects: 'scripts/bench-projects.ts',
  ingest: 'scripts/bench-ingest.ts',
  reports: 'scripts/bench-analysis.ts',
  rollups: 'scripts/bench-reports.ts',
  dashboard: 'scripts/bench-dashboard.ts',
} as const;
/** Benchmarks over generated or imported events, which take the data flags (`--scale`, `--events`, `--runs`, …). */
const DATA_BENCHES: readonly string[] = ['reports', 'rollups', 'dashboard'];

const args = process.argv.slice(2);
const names = args.filter((a) => a in BENCHES) as (keyof typeof BENCHES)[];
const flags = args.filter((a) => !(a in BENCHES));
let failed = 0;
for (const name of names.length ? names : (Object.keys(BENCHES) as (keyof typeof BENCHES)[])) {
  console.log(`\n=== bench: ${name} ===`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', BENCHES[name], ...(DATA_BENCHES.includes(name) ? flags : [])], { stdio: 'inherit' });
  if (run.status !== 0) {
    failed++;
    console.error(`bench ${name} exited with ${run.status}`);
  }
}
process.exit(failed ? 1 : 0);
