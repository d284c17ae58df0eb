/**
 * Latency of `GET /api/v1/projects` in-process (`npm run bench:projects`): the real app over
 * the real Redis (db 9 unless BENCH_REDIS_URL says otherwise) and the embedded ClickHouse in a
 * temp DATA_DIR. Measures auth (warm key cache) + rate limit (one Redis round trip) + project
 * lookup + JSON answer, one request at a time. Target: p50 under 2 ms.
 *
 * Options: --iterations 5000 --warmup 500 --projects 5
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { buildNodeRuntime } from '../src/entry/node-deps.js';
import { directSink } from '../src/ingest/direct-sink.js';
import { createAccount, createApiKey, deleteAccountIdentity } from '../src/auth/store.js';
import { createProject, deleteProjectRecords, listProjectsFor } from '../src/projects/store.js';
import { hostCalibrationLine } from './bench-host.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ITERATIONS = arg('iterations', 5000);
const WARMUP = arg('warmup', 500);
const PROJECTS = arg('projects', 5);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-bench-'));
  // The limiter runs on every request but must never refuse one here: a quota no run reaches.
  const config = parseConfig({
    DATA_DIR: dataDir,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/9',
    RATE_LIMIT_API_PER_MIN: String(1e9),
  });
  const runtime = await buildNodeRuntime(config, { makeSink: (d) => directSink(d.rowStore) });
  const { redis, clock } = runtime.deps;
  const app = createApp(runtime.deps);
  const tag = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const account = await createAccount(redis, { email: `bench-${tag}@bench.example` }, clock.now());
  const { key } = await createApiKey(redis, { accountId: account.id, scope: 'read', name: 'bench' }, clock.now());
  for (let i = 0; i < PROJECTS; i++) {
    const outcome = await createProject(redis, { name: `Bench ${i}`, domain: `p${i}-${tag}.bench.example`, timeZone: 'UTC', ownerId: account.id }, clock.now() + i);
    if (!outcome.ok) throw new Error('could not create the bench projects');
  }
  const init = { headers: { Authorization: `Bearer ${key}` } };

  const once = async () => {
    const res = await app.request('/api/v1/projects', init);
    const body = (await res.json()) as { projects: unknown[] };
    if (res.status !== 200 || body.projects.length !== PROJECTS) throw new Error(`unexpected answer ${res.status}`);
  };
  try {
    for (let i = 0; i < WARMUP; i++) await once(); // warms the key cache, the JIT and the Lua script cache
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < ITERATIONS; i++) {
      const t = performance.now();
      await once();
      times.push(performance.now() - t);
    }
    const elapsed = performance.now() - started;
    times.sort((a, b) => a - b);
    const fmt = (n: number) => n.toFixed(3);
    console.log(hostCalibrationLine());
    console.log(`GET /api/v1/projects (in-process, warm key cache, ${PROJECTS} projects, ${ITERATIONS} iterations after ${WARMUP} warm-up)`);
    console.log(`p50 ${fmt(percentile(times, 50))} ms  p95 ${fmt(percentile(times, 95))} ms  p99 ${fmt(percentile(times, 99))} ms  max ${fmt(times[times.length - 1])} ms`);
    console.log(`mean ${fmt(elapsed / ITERATIONS)} ms  ${Math.round((ITERATIONS / elapsed) * 1000)} ops/s`);
    const p50 = percentile(times, 50);
    console.log(p50 < 2 ? `target met: p50 ${fmt(p50)} ms < 2 ms` : `TARGET MISSED: p50 ${fmt(p50)} ms ≥ 2 ms`);
  } finally {
    for (const { project } of await listProjectsFor(redis, account.id)) await deleteProjectRecords(redis, project);
    await deleteAccountIdentity(redis, account);
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`bench-projects: ${err instanceof Error ? err.stack : err}`);
  process.exit(1);
});
