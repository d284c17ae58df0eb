/**
 * Dashboard benchmark (`npm run bench:dashboard [-- --events 1000000] [--shape live|bulk] [--runs 20] [--periods 24h,30d,90d] [--reload] [--import-only] [--during-import] [--import-concurrency 1]`): what
 * a user waits for, on data shaped like production and loaded the way production loads it.
 *
 * `--import-only` stops after the import's figures. `--during-import` (on a copy of the store, removed
 * after) times only computed 30d dashboards while other projects import 300,000 events each: asked
 * back to back, and one a second, against the same dashboards and the same import alone.
 *
 * Starts the app in-process as `npm start` wires it (buildNodeRuntime + createApp, embedded
 * ClickHouse in `.bench-data/dashboard-<events>[-bulk]/`, the batching sink with its journal, Redis db 10),
 * and on first use imports `--events` events (default 1,000,000; 10,000,000 works) for one UTC
 * project through `POST …/import` in 100,000-line NDJSON requests: 90 days up to the load time,
 * ~0.3 visitors per event (`--shape bulk`: ~14 events per visitor, as bench:rollups generates), 2,000 Zipf paths, 10 sources (~40 % direct), 30 countries, 10 % custom
 * events (5 % leave, 2 % vitals, the rest pageviews). Later runs reuse the directory (`--reload`
 * imports again into a fresh one). Timing starts once the engine's merges are done. While timing, a trickle of live events (`--live-rate`, default
 * 20/s) arrives through `POST /api/event`, so no answer may come from data older than the last
 * flushed batch. Then: every dashboard report's p50/p95 at each of `--periods` (default 24h, 30d and 90d), a whole dashboard (its 12
 * requests in parallel), 1, 5 and 20 dashboards at once, filtered, breakdown, comparison and goals questions, and
 * the engine's fixed cost per query, each figure beside the target of issue 16. Each figure is
 * taken twice: "computed" by the app without its answer cache (what every miss costs; a report's also
 * "after a batch", each ask the first since a flushed batch of a new visitor) and "served" by the app as
 * `npm start` runs it; dashboards also right after a flushed batch of the
 * project (its data version moved: every answer computed again, the rows-after-now checks
 * answered by the latest-row stamp the trickle's batches carry, README "The latest-row stamp"), and opened at a random moment of the trickle's
 * flush cycle (served when the answers asked lately were computed again after the last flush).
 *
 * Environment: BENCH_REDIS_URL (default redis://127.0.0.1:6379/10; only bench keys are written).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { withQuery } from '../src/adapters/clickhouse.js';
import type { RowStore } from '../src/adapters/row-store.js';
import { createApp } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { buildNodeRuntime } from '../src/entry/node-deps.js';
import { createBatcher } from '../src/ingest/batcher.js';
import { fileJournal } from '../src/ingest/journal.js';
import { fileQuarantine } from '../src/ingest/file-quarantine.js';
import { createServices } from '../src/services.js';
import { warmUpReports } from '../src/reports/engine-warm-up.js';
import type { Project } from '../src/projects/store.js';
import { goalStore, MAX_GOALS, type Goal } from '../src/goals/store.js';
import { hostCalibrationLine } from './bench-host.js';
import { BENCH_DAYS as DAYS, BENCH_DOMAIN as DOMAIN, BENCH_PROJECT_ID as PROJECT_ID, benchOwner } from './bench-project.js';
import { argValue } from './gen-events.js';
import { waitForMerges } from './gen-live-events.js';
import { intArg, ms, percentile, timeRuns, timeRunsWithCpu } from './bench-timing.js';
import { seededRandom, zipf } from './seeded-random.js';

/** `store` with the time of each insert pushed to `writes`. */
function timedWrites(store: RowStore, writes: number[]): RowStore {
  return {
    ...store,
    async insert(table, rows, opts) {
      const t = performance.now();
      await store.insert(table, rows, opts);
      writes.push(performance.now() - t);
    },
  };
}

const DAY_MS = 86_400_000;
const LINES_PER_REQUEST = 100_000;
/** How long after a flushed batch a report's "after a batch" ask comes (computedAfterBatches). */
const AFTER_BATCH_MS = 300;

/** The 12 requests the dashboard sends for a period (src/dashboard/client/dashboard.ts). */
const DASHBOARD = (period: string): [name: string, path: string][] => [
  ['stats', `/stats?period=${period}`],
  ['timeseries', `/timeseries?period=${period}`],
  ['pages', `/pages?period=${period}&limit=10`],
  ['referrers', `/referrers?period=${period}&limit=10`],
  ['countries', `/countries?period=${period}&limit=10`],
  ['cities', `/cities?period=${period}&limit=10`],
  ['devices', `/devices?period=${period}`],
  ['browsers', `/browsers?period=${period}&limit=10`],
  ['os', `/os?period=${period}&limit=10`],
  ['events', `/events?period=${period}&limit=20`],
  ['visitors', `/visitors?period=${period}&limit=10`],
  ['performance', `/performance?period=${period}`],
];

interface Targets {
  dashboard30d: number;
  dashboard90d?: number;
  concurrent5?: number;
  report30d: Record<string, number>;
  importPerSec: number;
}

/** p50 targets of issue 16 (ms, except import): at 1M events, and at 10M (dashboard 30d, every report at 30d). */
function targetsFor(events: number): Targets {
  if (events >= 10_000_000) {
    return { dashboard30d: 300, report30d: Object.fromEntries(DASHBOARD('30d').map(([name]) => [name, 50])), importPerSec: 150_000 };
  }
  // 20× faster than the Umami figures the issue measured: pages 332, referrers 278, countries 316, events 80, stats 726 ms.
  return { dashboard30d: 120, dashboard90d: 200, concurrent5: 500, report30d: { pages: 16, referrers: 14, countries: 16, stats: 36, events: 4 }, importPerSec: 150_000 };
}

const load = () => `load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;

/** A figure against its target (lower is better unless `higher`): PASS/MISS and how far off. */
function verdict(value: number, target: number | undefined, higher = false): string {
  if (target === undefined) return '';
  const ok = higher ? value >= target : value <= target;
  const ratio = higher ? target / value : value / target;
  return `${ok ? 'PASS' : 'MISS'} (${ratio.toFixed(2)}× target ${higher ? '≥' : '≤'} ${target.toLocaleString('en')})`;
}

const COUNTRIES = ['US', 'DE', 'GB', 'IN', 'FR', 'CA', 'BR', 'NL', 'ES', 'IT', 'JP', 'AU', 'PL', 'SE', 'CH', 'AT', 'BE', 'DK', 'FI', 'NO', 'IE', 'PT', 'CZ', 'MX', 'AR', 'ZA', 'KR', 'SG', 'NZ', 'IL'];
/** 10 sources: direct (no referrer) and 9 referring sites. */
const REFERRERS = [null, 'https://www.google.com/', 'https://news.ycombinator.com/', 'https://www.reddit.com/r/webdev/', 'https://twitter.com/', 'https://www.bing.com/', 'https://duckduckgo.com/', 'https://github.com/', 'https://www.linkedin.com/', 'https://dev.to/'];
const DEVICES = ['Desktop', 'Mobile', 'Tablet'];
const BROWSERS = ['Chrome', 'Safari', 'Firefox', 'Edge', 'Samsung Internet', 'Opera'];
const OSES = ['Windows', 'iOS', 'Android', 'macOS', 'Linux'];
const EVENT_NAMES = ['signup', 'download', 'outbound', 'play', 'share', 'subscribe', 'search', 'contact', 'login', 'invite'];
/** The project's goals, one of each kind the data holds (no transactions), for the goals row of the questions table. */
const GOALS: Pick<Goal, 'name' | 'type' | 'value'>[] = [
  { name: 'Pages 1…', type: 'pageview', value: '/page/1*' },
  { name: 'Signup', type: 'event', value: 'signup' },
  { name: 'From Hacker News', type: 'traffic', value: 'news.ycombinator.com' },
  { name: 'Engagement', type: 'engagement', value: '' },
];

/**
 * The visitor pool per event of each data shape: `live` gives ~0.3 distinct visitors per event
 * (pool = sessions / 0.6), as production leaves it; `bulk` ~14 events per visitor, the shape of
 * the generator behind `bench:rollups` (data generated inside ClickHouse).
 */
const POOL_PER_EVENT = { live: 1 / 2.5 / 0.6, bulk: 1 / 14 } as const;
type Shape = keyof typeof POOL_PER_EVENT;

/**
 * Yields the import's NDJSON lines in time order, one day at a time: sessions of 1–6 events
 * (mean 2.5) start through the day on a diurnal curve, each taking a visitor at random from a
 * pool sized by the shape (POOL_PER_EVENT).
 */
function* eventLines(total: number, end: number, domain: string, shape: Shape): Generator<string> {
  const random = seededRandom(16);
  // Zipf(1) ranks 1…n drawn from the seeded generator.
  const rank = (n: number) => {
    const pick = zipf(n);
    return () => pick(random()) + 1;
  };
  const path = rank(2000);
  const country = rank(COUNTRIES.length);
  const source = rank(REFERRERS.length);
  const pool = Math.max(1, Math.round(total * POOL_PER_EVENT[shape]));
  const start = Math.floor((end - DAYS * DAY_MS) / 1000) * 1000;
  let emitted = 0;
  let session = 0;
  for (let day = 0; day < DAYS; day++) {
    const quota = Math.round(((day + 1) * total) / DAYS) - emitted;
    const events: { ts: number; line: string }[] = [];
    while (events.length < quota) {
      session++;
      const visitor = Math.floor(random() * pool);
      // Visitor-level dimensions hash the visitor, so a returning visitor keeps them.
      const vr = seededRandom(visitor + 1);
      const cc = COUNTRIES[country() - 1]!;
      const dims = {
        countryCode: cc,
        city: `${cc} City ${Math.floor(vr() * 5)}`,
        device: DEVICES[Math.floor(vr() ** 2 * 3)]!,
        browser: BROWSERS[Math.floor(vr() ** 2 * BROWSERS.length)]!,
        os: OSES[Math.floor(vr() ** 2 * OSES.length)]!,
      };
      const u = random();
      // A diurnal day: more sessions in the afternoon (UTC).
      let t = start + day * DAY_MS + Math.floor((u - (0.5 * Math.sin(2 * Math.PI * u)) / (2 * Math.PI)) * DAY_MS);
      if (t >= end - 60_000) t = end - 60_000 - Math.floor(random() * 3_600_000);
      const length = Math.min(6, 1 + Math.floor(-Math.log(1 - random()) * 2));
      let referrer = REFERRERS[source() - 1] ?? undefined;
      let page = path();
      for (let i = 0; i < length && events.length < quota; i++) {
        const k = random();
        const kind = k < 0.1 ? 'custom' : k < 0.15 ? 'leave' : k < 0.17 ? 'vitals' : 'pageview';
        const url = `https://${domain}${page === 1 ? '/' : `/page/${page}`}`;
        const line: Record<string, unknown> = { timestamp: new Date(t).toISOString(), kind, visitorId: `v${visitor}`, sessionId: `s${session}`, url, ...dims };
        if (referrer) line.referrer = referrer;
        if (kind === 'custom') line.name = EVENT_NAMES[Math.floor(random() ** 2 * EVENT_NAMES.length)];
        if (kind === 'leave') line.durationMs = 2000 + Math.floor(random() * 300_000);
        if (kind === 'vitals') line.vitals = { lcp: 500 + Math.floor(random() * 3000), inp: 20 + Math.floor(random() * 400), cls: Math.floor(random() * 300) / 1000, fcp: 300 + Math.floor(random() * 2000), ttfb: 50 + Math.floor(random() * 900) };
        events.push({ ts: t, line: JSON.stringify(line) });
        // Later events of the visit come through the site's own links.
        referrer = url;
        if (kind === 'pageview') page = path();
        t = Math.min(end - 1000, t + 5_000 + Math.floor(random() * 120_000));
      }
    }
    events.sort((a, b) => a.ts - b.ts);
    for (const e of events) yield e.line;
    emitted += events.length;
  }
}

interface Meta {
  events: number;
  loadedAt: number;
  importSeconds: number;
  /** Absent in directories imported before it was recorded. */
  importCpuSeconds?: number;
}

async function main() {
  const events = intArg('events', 1_000_000);
  const TARGETS = targetsFor(events);
  const runs = intArg('runs', 20);
  const liveRate = Number(argValue('live-rate') ?? 20);
  const periods = (argValue('periods') ?? '24h,30d,90d').split(',');
  const dataShape = (argValue('shape') ?? 'live') as Shape;
  if (!(dataShape in POOL_PER_EVENT)) throw new Error(`--shape must be one of: ${Object.keys(POOL_PER_EVENT).join(', ')}`);
  const storeDir = resolve('.bench-data', dataShape === 'live' ? `dashboard-${events}` : `dashboard-${events}-${dataShape}`);
  // `--during-import` stores another project's rows: it runs on a copy of the store, removed at the end.
  const duringImport = process.argv.includes('--during-import');
  const dataDir = duringImport ? `${storeDir}-scratch` : storeDir;
  const metaFile = join(dataDir, 'bench-dashboard.json');
  if (process.argv.includes('--reload')) rmSync(storeDir, { recursive: true, force: true });
  if (duringImport) {
    rmSync(dataDir, { recursive: true, force: true });
    if (existsSync(join(storeDir, 'bench-dashboard.json'))) cpSync(storeDir, dataDir, { recursive: true });
  }
  const reuse = existsSync(metaFile);
  if (!reuse) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });

  const config = parseConfig({
    DATA_DIR: dataDir,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/10',
    // Thousands of requests a minute from one client: the limits are not what this measures.
    RATE_LIMIT_API_PER_MIN: '100000000',
    RETENTION_DAYS: '3650',
    // The live trickle's addresses come in X-Forwarded-For (app.request has no socket).
    TRUST_PROXY: '1',
    // `EMBEDDED_READS_BESIDE=0 npm run bench:dashboard` measures reads waiting their turn instead.
    EMBEDDED_READS_BESIDE: process.env.EMBEDDED_READS_BESIDE,
  });
  // As npm start: events through the batcher with its journal; imports parsed on the request
  // thread (npm start uses min(4, cores - 2) parse workers: none on 2 cores).
  // Every batch the batcher writes (live events, flushed batches), timed until ClickHouse has it and its data version moved.
  const batchWrites: number[] = [];
  const runtime = await buildNodeRuntime(config, {
    makeSink: (d) => createBatcher(timedWrites(d.rowStore, batchWrites), { journal: fileJournal(join(dataDir, 'ingest-journal')), quarantine: fileQuarantine(join(dataDir, 'quarantine')), flushIntervalMs: config.INGEST_FLUSH_MS }),
  });
  const { deps } = runtime;
  let stopLive = () => {};
  try {
    const now = Date.now();
    const { key, project, register } = await benchOwner(deps.redis, 'bench-dash', 'write', now);
    await register(project);
    for (const goal of await goalStore.list(deps.redis, project.id)) await goalStore.remove(deps.redis, project.id, goal.id);
    for (const goal of GOALS) await goalStore.create(deps.redis, project.id, { ...goal, target: null }, now, MAX_GOALS);
    // The app's engine handle, counting each query and its time while a report is traced.
    const trace: { on: boolean; queries: { label: string; ms: number }[] } = { on: false, queries: [] };
    const clickhouse = withQuery(deps.clickhouse, async (params) => {
      const t = performance.now();
      const result = await deps.clickhouse.query(params);
      if (trace.on) trace.queries.push({ label: queryLabel(params.query), ms: performance.now() - t });
      return result;
    });
    const appDeps = { ...deps, clickhouse };
    const app = createApp(appDeps, createServices(appDeps));
    // The same app without the answer cache: what computing every answer costs (the cache's misses).
    const computedDeps = { ...appDeps, answers: undefined };
    const computedApp = createApp(computedDeps, createServices(computedDeps));
    const answers = deps.answers!;
    const auth = { Authorization: `Bearer ${key}` };
    /**
     * An import request's body: NDJSON lines as bytes, as a client sends them over a socket. A string body would be
     * encoded to UTF-8 by the in-process Request, the client's work timed as the server's.
     */
    const importBody = (lines: readonly string[]): Uint8Array<ArrayBuffer> => Buffer.from(lines.join('\n') + '\n');
    /** One import request into `domain`'s project (its body made by importBody, before any timing): the lines it stored. */
    const importInto = async (domain: string, body: Uint8Array<ArrayBuffer>) => {
      const res = await app.request(`/api/v1/projects/${domain}/import`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/x-ndjson' }, body });
      const answer = (await res.json()) as { imported: number; rejected: number; errors: unknown[] };
      if (res.status !== 200 || answer.rejected) throw new Error(`import: ${res.status} ${JSON.stringify(answer).slice(0, 500)}`);
      return answer.imported;
    };

    console.log(`# dashboard benchmark — ${new Date().toISOString()}, node ${process.version}, ${load()}, reads beside the chain ${config.EMBEDDED_READS_BESIDE ? 'on' : 'off'}`);
    console.log(hostCalibrationLine());

    let meta: Meta;
    if (reuse) {
      meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Meta;
      console.log(`reusing ${dataDir}: ${meta.events.toLocaleString('en')} events imported ${new Date(meta.loadedAt).toISOString()} in ${meta.importSeconds.toFixed(1)} s (${Math.round(meta.events / meta.importSeconds).toLocaleString('en')} events/s then${meta.importCpuSeconds === undefined ? '' : `, ${((meta.importCpuSeconds * 1e6) / meta.events).toFixed(1)} ms of process CPU per 1,000 events`})`);
    } else {
      // Request time only: building each 100,000-line body is the client's work, not the server's.
      let inServer = 0;
      // The process's CPU time in the requests (the engine's threads included): less stretched than
      // wall time when other work shares the cores, so it compares runs on a noisy host.
      let cpuInServer = 0;
      let imported = 0;
      const batch: string[] = [];
      // `--import-concurrency N`: the client sends N requests at once (their bodies built before, their wall time counted once).
      const concurrency = intArg('import-concurrency', 1);
      const bodies: Uint8Array<ArrayBuffer>[] = [];
      const send = async () => {
        const t = performance.now();
        const cpu = process.cpuUsage();
        const counts = await Promise.all(bodies.splice(0).map((body) => importInto(DOMAIN, body)));
        inServer += performance.now() - t;
        const used = process.cpuUsage(cpu);
        cpuInServer += (used.user + used.system) / 1000;
        imported += counts.reduce((a, b) => a + b, 0);
        if ((imported / LINES_PER_REQUEST) % 10 === 0) console.error(`  … ${imported.toLocaleString('en')} imported, ${Math.round(imported / (inServer / 1000)).toLocaleString('en')} events/s, ${load()}`);
      };
      const bodyOfBatch = () => {
        bodies.push(importBody(batch));
        batch.length = 0;
      };
      for (const line of eventLines(events, now, DOMAIN, dataShape)) {
        batch.push(line);
        if (batch.length < LINES_PER_REQUEST) continue;
        bodyOfBatch();
        if (bodies.length === concurrency) await send();
      }
      if (batch.length) bodyOfBatch();
      if (bodies.length) await send();
      meta = { events: imported, loadedAt: now, importSeconds: inServer / 1000, importCpuSeconds: cpuInServer / 1000 };
      writeFileSync(metaFile, JSON.stringify(meta));
      const rate = imported / meta.importSeconds;
      console.log(`import: ${imported.toLocaleString('en')} events in ${meta.importSeconds.toFixed(1)} s of requests${concurrency > 1 ? ` (${concurrency} at once)` : ''} = ${Math.round(rate).toLocaleString('en')} events/s — ${verdict(rate, TARGETS.importPerSec, true)}; ${load()}`);
      console.log(`import CPU: ${(cpuInServer / (imported / 1000)).toFixed(1)} ms of process CPU (engine threads included) per 1,000 events, ${((cpuInServer / inServer) || 0).toFixed(2)} cores busy on average`);
    }
    // `--import-only`: the import's figures alone (with `--reload`, a fresh import to compare schemas or builds).
    if (process.argv.includes('--import-only')) return;
    const shape = await deps.clickhouse.query({
      query: `SELECT count() AS events, uniqExact(visitor_id) AS visitors, uniqExact(session_id) AS sessions, uniqExact(path) AS paths, countIf(kind = 'custom') AS custom, count(DISTINCT _part) AS parts
              FROM events WHERE project_id = {p:String}`,
      query_params: { p: PROJECT_ID },
      format: 'JSONEachRow',
    });
    const [s] = await shape.json<Record<string, string>>();
    console.log(`data: ${Number(s!.events).toLocaleString('en')} events, ${Number(s!.visitors).toLocaleString('en')} visitors (${(Number(s!.visitors) / Number(s!.events)).toFixed(2)}/event), ${Number(s!.sessions).toLocaleString('en')} sessions, ${s!.paths} paths, ${((100 * Number(s!.custom)) / Number(s!.events)).toFixed(1)} % custom, ${s!.parts} parts of events`);

    // A fresh import leaves merges running for minutes (every rollup's parts too): timed beside them,
    // the first table's reports showed p95s of 3-4x their p50 and a 10M stats p50 twice its traced one.
    // Data imported long before a user looks has none, so the timing starts once they are done.
    await waitForMerges(deps.clickhouse, (line) => console.log(line.trim()), 600_000, 'all');
    // What `npm start` runs at start (README "The engine's warm-up"): the reports' statements compiled before any is timed.
    const warmUpStarted = performance.now();
    const warmUp = await warmUpReports(appDeps);
    if (warmUp.error) throw warmUp.error;
    console.log(`engine warm-up (as npm start runs it): ${warmUp.asked} reports asked in ${ms(performance.now() - warmUpStarted)} ms`);

    // The live trickle: tracker events for random visitors, recorded through the batcher (flushed every INGEST_FLUSH_MS).
    let liveSent = 0;
    let liveDropped = 0;
    const trickle = setInterval(() => {
      const i = liveSent++;
      const body = JSON.stringify({ site: PROJECT_ID, kind: 'pageview', url: `https://${DOMAIN}/page/${1 + (i % 50)}`, referrer: i % 3 ? 'https://www.google.com/' : null });
      void Promise.resolve(
        app.request('/api/event', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 'X-Forwarded-For': `198.51.${(i >> 8) & 255}.${i & 255}` },
          body,
        }),
      ).then((res) => {
          if (res.status !== 202 || res.headers.get('X-Sightline-Dropped')) liveDropped++;
        });
    }, 1000 / liveRate);
    stopLive = () => clearInterval(trickle);

    type Via = typeof app;
    const call = async (path: string, via: Via = app) => {
      const res = await via.request(`/api/v1/projects/${DOMAIN}${path}`, { headers: auth });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 300)}`);
      return body;
    };
    /**
     * Runs `fn` with the background refresh (answers kept fresh after the trickle's flushes) held
     * back, as it is while any user's question is answered: the "computed" figures are what a miss
     * costs, not a miss queued behind refreshes.
     */
    const quietly = async <T>(fn: () => Promise<T>): Promise<T> => {
      const hold = answers.refresher?.userQuestion();
      try {
        await answers.refresher?.current();
        return await fn();
      } finally {
        hold?.();
      }
    };
    const time = async (fn: () => Promise<unknown>) => {
      const t = performance.now();
      await fn();
      return performance.now() - t;
    };
    /** The app's background work a warm-up started (parts of closed hours summed after a first ask): done before timing. */
    const settle = () => deps.background?.settled();
    const dashboard = (period: string, via: Via = app) => Promise.all(DASHBOARD(period).map(([, path]) => call(path, via)));
    /**
     * One live event of a new visitor through the API, then the batcher flushed: the project's data
     * version moves, and the latest visitors change as they do with every batch of a live site.
     */
    let batches = 0;
    const newBatch = async () => {
      const n = batches++;
      await app.request('/api/event', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'X-Forwarded-For': `203.0.${(n >> 8) & 255}.${n & 255}` },
        body: JSON.stringify({ site: PROJECT_ID, kind: 'pageview', url: `https://${DOMAIN}/after-flush` }),
      });
      await deps.sink.flush();
    };
    /** Milliseconds of `n` calls of `fn`, each after a flushed batch and `pauseMs` (neither timed). */
    const timedAfterBatches = async (n: number, fn: () => Promise<unknown>, pauseMs = 0) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        await newBatch();
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
        out.push(await time(fn));
      }
      return out;
    };
    /**
     * `runs` asks of `path` computed, each the first since a flushed batch, a moment after it
     * (AFTER_BATCH_MS: the merges an insert starts are done by then, as they are when a viewer
     * comes at a random moment): what the next viewer of a live site meets on a miss, where no
     * engine cache remembers the rows of the ask before.
     */
    const computedAfterBatches = (path: string) => quietly(() => timedAfterBatches(runs, () => call(path, computedApp), AFTER_BATCH_MS));
    const cacheUse = (before: { computed: number; reused: number }) => {
      const computed = answers.counts.computed - before.computed;
      const reused = answers.counts.reused - before.reused;
      return `${reused} of ${computed + reused} answers reused`;
    };

    console.log(`\nlive trickle: ${liveRate} events/s through POST /api/event (batcher flush every ${config.INGEST_FLUSH_MS} ms); ${runs} runs per figure after one warm-up`);
    console.log('"computed": the app without the answer cache (every answer computed: what a miss costs); "served": the app as `npm start` runs it,');
    console.log('with the answer cache (an answer is reused only while the project\'s data version stays, so the trickle\'s flushes force recomputation)\n');
    if (duringImport) {
      // Other projects' imports (three 100,000-line requests of the same shape each): alone, while
      // computed 30d dashboards of this one are asked back to back, and while one viewer opens a
      // dashboard every second: what a viewer meets during a bulk load, and what the load gives up.
      const lines = (domain: string) => [...eventLines(3 * LINES_PER_REQUEST, Date.now(), domain, dataShape)];
      const importWhile = async (n: number, asking?: (importing: () => boolean) => Promise<number[]>) => {
        const other: Project = { ...project, id: `prj_benchduringimport00${n}`, name: `Imported meanwhile ${n}`, domain: `bench-during-import-${n}.example` };
        await register(other);
        const body = lines(other.domain);
        const bodies = [0, 1, 2].map((i) => importBody(body.slice(i * LINES_PER_REQUEST, (i + 1) * LINES_PER_REQUEST)));
        let importing = true;
        const started = performance.now();
        // The import's own time: the paced asker may still be sleeping when it ends.
        const importDone = (async () => {
          for (const b of bodies) await importInto(other.domain, b);
          importing = false;
          return (performance.now() - started) / 1000;
        })();
        const asked = asking ? await asking(() => importing) : [];
        const seconds = await importDone;
        return { asked, seconds, rate: `${Math.round(body.length / seconds).toLocaleString('en')} events/s` };
      };
      const computedDashboard = () => dashboard('30d', computedApp);
      const alone = await quietly(() => timeRuns(runs, computedDashboard, settle));
      const importAlone = await importWhile(1);
      /** Dashboards asked while the import runs, one every `everyMs` start to start (0: back to back). */
      const askEvery = (everyMs: number) => async (importing: () => boolean) => {
        const during: number[] = [];
        while (importing()) {
          const next = performance.now() + everyMs;
          during.push(await time(computedDashboard));
          if (everyMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
        }
        return during;
      };
      const backToBack = await importWhile(2, askEvery(0));
      const paced = await importWhile(3, askEvery(1000));
      const figures = (d: typeof backToBack) => `${d.asked.length} in ${d.seconds.toFixed(1)} s, p50 ${ms(percentile(d.asked, 50))}, p95 ${ms(percentile(d.asked, 95))} ms; the import meanwhile ${d.rate}`;
      console.log(`dashboards during an import (${(3 * LINES_PER_REQUEST).toLocaleString('en')} events into another project, in 3 requests), 30d, computed:`);
      console.log(`  alone: p50 ${ms(percentile(alone, 50))}, p95 ${ms(percentile(alone, 95))} ms; the import alone ${importAlone.rate}`);
      console.log(`  during the import, back to back: ${figures(backToBack)}`);
      console.log(`  during the import, one a second: ${figures(paced)}; ${load()}`);
      return;
    }
    const rows: string[][] = [];
    const singles: Record<string, number> = {};
    for (const period of periods) {
      for (const [name, path] of DASHBOARD(period)) {
        const computed = await quietly(() => timeRuns(runs, () => call(path, computedApp), settle));
        const afterBatch = await computedAfterBatches(path);
        const before = { ...answers.counts };
        const served = await timeRuns(runs, () => call(path), settle);
        const p50 = percentile(computed, 50);
        if (period === '30d') singles[name] = p50;
        const target = period === '30d' ? TARGETS.report30d[name] : undefined;
        rows.push([
          name, period, ms(p50), ms(percentile(computed, 95)), ms(percentile(afterBatch, 50)), ms(percentile(afterBatch, 95)), ms(percentile(served, 50)), ms(percentile(served, 95)), cacheUse(before),
          target === undefined ? '' : `computed ${verdict(p50, target)}; after a batch ${verdict(percentile(afterBatch, 50), target)}; served ${verdict(percentile(served, 50), target)}`,
        ]);
      }
    }
    printTable(['report', 'period', 'computed p50', 'p95', 'after a batch p50', 'p95', 'served p50', 'p95', 'answer cache', 'issue 16 target (p50)'], rows);
    const sumSingles = Object.values(singles).reduce((a, b) => a + b, 0);
    if (periods.includes('30d')) console.log(`(sum of the 12 computed report p50s at 30d, one after another: ${ms(sumSingles)} ms; ${load()})`);

    console.log('\nwhole dashboard (12 requests in parallel):');
    // Host speed drifts by up to 1.7× within a run: each dashboard table's figures are read beside it (scripts/README.md "Dashboard runs, VM by VM", the fortieth VM).
    console.log(hostCalibrationLine() + ', before this table');
    const whole: string[][] = [];
    for (const [period, target] of periods.map((p) => [p, p === '30d' ? TARGETS.dashboard30d : p === '90d' ? TARGETS.dashboard90d : undefined] as const)) {
      const { wall: computed, cpu: computedCpu } = await quietly(() => timeRunsWithCpu(runs, () => dashboard(period, computedApp), settle));
      const before = { ...answers.counts };
      const served = await timeRuns(runs, () => dashboard(period), settle);
      const use = cacheUse(before);
      // The first dashboard after a flushed batch of the project: every answer computed again.
      const fresh = await timedAfterBatches(Math.max(5, Math.round(runs / 2)), () => dashboard(period));
      // A viewer opening the dashboard at a random moment of the live trickle's flush cycle: served
      // when the answers asked lately were already computed again after the last flush (ANSWER_REFRESH_MIN).
      const anyMoment: number[] = [];
      const refreshedBefore = answers.refresher?.counts.refreshed ?? 0;
      for (let i = 0; i < runs; i++) {
        await new Promise((r) => setTimeout(r, Math.random() * config.INGEST_FLUSH_MS));
        anyMoment.push(await time(() => dashboard(period)));
      }
      const refreshed = (answers.refresher?.counts.refreshed ?? 0) - refreshedBefore;
      whole.push([period, 'computed', ms(percentile(computed, 50)), ms(percentile(computed, 95)), `process CPU p50 ${ms(percentile(computedCpu, 50))} ms`, verdict(percentile(computed, 50), target)]);
      whole.push([period, 'served, with the trickle', ms(percentile(served, 50)), ms(percentile(served, 95)), use, verdict(percentile(served, 50), target)]);
      whole.push([period, 'served, first after a flushed batch', ms(percentile(fresh, 50)), ms(percentile(fresh, 95)), '', verdict(percentile(fresh, 50), target)]);
      whole.push([period, 'served, a viewer at a random moment', ms(percentile(anyMoment, 50)), ms(percentile(anyMoment, 95)), `${refreshed} answers refreshed meanwhile`, verdict(percentile(anyMoment, 50), target)]);
    }
    printTable(['period', 'path', 'p50 ms', 'p95 ms', 'answer cache', 'target'], whole);
    console.log(`(${load()})`);

    console.log('\nconcurrent dashboards, 30d (each dashboard\'s own time, all started together):');
    console.log(hostCalibrationLine() + ', before this table');
    const conc: string[][] = [];
    for (const [path, via, afterFlush] of [['computed', computedApp, false], ['served, with the trickle', app, false], ['served, each round after a flushed batch', app, true]] as const) {
      for (const n of [1, 5, 20]) {
        const rounds = Math.max(3, Math.round(runs / n) * 2);
        const each: number[] = [];
        const wall: number[] = [];
        await dashboard('30d', via);
        const before = { ...answers.counts };
        const runRounds = async () => {
          for (let r = 0; r < rounds; r++) {
            if (afterFlush) await newBatch();
            const t0 = performance.now();
            each.push(...(await Promise.all(Array.from({ length: n }, () => time(() => dashboard('30d', via))))));
            wall.push(performance.now() - t0);
          }
        };
        await (via === computedApp ? quietly(runRounds) : runRounds());
        const use = via === app ? cacheUse(before) : '';
        conc.push([String(n), path, String(rounds), ms(percentile(each, 50)), ms(percentile(each, 95)), ms(percentile(wall, 50)), use, n === 5 ? verdict(percentile(each, 50), TARGETS.concurrent5) : '']);
      }
    }
    printTable(['dashboards', 'path', 'rounds', 'p50 ms each', 'p95 ms each', 'wall p50 ms', 'answer cache', 'target'], conc);
    console.log(`(${load()})`);

    console.log('\nfiltered, breakdown, comparison and goals questions, 30d (one at 24h):');
    const questions: [string, string][] = [
      ['stats country==US', '/stats?period=30d&filters=country%3D%3DUS'],
      ['pages country==US', '/pages?period=30d&limit=10&filters=country%3D%3DUS'],
      ['stats page==/page/2', '/stats?period=30d&filters=page%3D%3D%2Fpage%2F2'],
      ['breakdown source', '/breakdown?period=30d&dimension=source&metrics=visitors,pageviews&limit=10'],
      ['stats compare previous', '/stats?period=30d&compare=previous_period'],
      ['referrers compare previous', '/referrers?period=30d&limit=10&compare=previous_period'],
      ['stats 24h compare previous', '/stats?period=24h&compare=previous_period'],
      // Goals are served from the answer cache under the same definitions (README "Answer cache").
      [`goals (${GOALS.length})`, '/goals?period=30d'],
    ];
    const qrows: string[][] = [];
    for (const [label, path] of questions) {
      const computed = await quietly(() => timeRuns(runs, () => call(path, computedApp), settle));
      const before = { ...answers.counts };
      const served = await timeRuns(runs, () => call(path), settle);
      qrows.push([label, ms(percentile(computed, 50)), ms(percentile(computed, 95)), ms(percentile(served, 50)), ms(percentile(served, 95)), cacheUse(before)]);
    }
    printTable(['question', 'computed p50', 'p95', 'served p50', 'p95', 'answer cache'], qrows);

    console.log('\nengine fixed cost per query (deps.clickhouse, no HTTP):');
    const erows: string[][] = [];
    const engine = async (sql: string, params: Record<string, string> = {}) => {
      const r = await deps.clickhouse.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      await r.json();
    };
    const probes: [string, string][] = [
      ['SELECT 1', 'SELECT 1'],
      ['SELECT count() FROM system.one', 'SELECT count() FROM system.one'],
      ['SELECT sum(pageviews) FROM stats_1d (project, 30 days)', `SELECT sum(pageviews) FROM stats_1d WHERE project_id = {p:String} AND bucket >= now() - INTERVAL 30 DAY`],
    ];
    for (const [label, sql] of probes) {
      const t = await timeRuns(Math.max(runs, 50), () => engine(sql, { p: PROJECT_ID }).catch((e: Error) => { throw new Error(`${label}: ${e.message}`); }));
      erows.push([label, ms(percentile(t, 50)), ms(percentile(t, 95))]);
    }
    // Twelve different reads (the same one twelve times would be sent once), combined into one statement.
    const par = await timeRuns(runs, () => Promise.all(Array.from({ length: 12 }, (_, i) => engine('SELECT count() + {i:UInt8} FROM system.one', { i: String(i) }))));
    erows.push(['12 different system.one reads asked together (whole batch)', ms(percentile(par, 50)), ms(percentile(par, 95))]);
    // chdb runs queries with bound parameters one at a time, process-wide (README "Where the computed time goes"):
    // a dashboard's parallel requests cannot overlap inside the engine. Two different reads asked together go as
    // one statement of two branches (deps.clickhouse combines them); the same read twice would be sent once.
    const visitSized = `SELECT count() FROM (SELECT session_id, any(visitor_id), argMin(referrer_source, ts) FROM events WHERE project_id = {p:String} AND ts >= now() - toIntervalDay({days:UInt32}) GROUP BY session_id)`;
    const visitPasses = [{ p: PROJECT_ID, days: '30' }, { p: PROJECT_ID, days: '29' }];
    const inARow = await timeRuns(runs, async () => { for (const params of visitPasses) await engine(visitSized, params); });
    const together = await timeRuns(runs, () => Promise.all(visitPasses.map((params) => engine(visitSized, params))));
    erows.push(['2 visit passes (30 and 29 days), one after another', ms(percentile(inARow, 50)), ms(percentile(inARow, 95))]);
    erows.push([`2 visit passes asked together: one statement (${(percentile(together, 50) / percentile(inARow, 50)).toFixed(2)} of in a row)`, ms(percentile(together, 50)), ms(percentile(together, 95))]);
    const overhead = await timeRuns(runs, () => call(''));
    erows.push(['API overhead: GET project (auth, rate limit, Redis)', ms(percentile(overhead, 50)), ms(percentile(overhead, 95))]);
    printTable(['probe', 'p50 ms', 'p95 ms'], erows);

    // Where a report's time goes: its engine queries (in order of completion) against its whole time.
    console.log(`\nengine round trips per report, ${periods.join(', ')} (median of 5 traced runs; ms each, in order of completion):`);
    const trows: string[][] = [];
    for (const [name, path, period] of periods.flatMap((p) => DASHBOARD(p).map(([name, path]) => [name, path, p] as const))) {
      const traced: { total: number; queries: { label: string; ms: number }[] }[] = [];
      for (let i = 0; i < 5; i++) {
        const total = await quietly(async () => {
          // Traced only once the refresh in progress (if any) is done, so its queries are not counted here.
          trace.queries = [];
          trace.on = true;
          try {
            return await time(() => call(path, computedApp));
          } finally {
            trace.on = false;
          }
        });
        traced.push({ total, queries: trace.queries });
      }
      traced.sort((a, b) => a.total - b.total);
      const mid = traced[2]!;
      const engineMs = mid.queries.reduce((a, q) => a + q.ms, 0);
      trows.push([name, period, String(mid.queries.length), ms(engineMs), ms(mid.total), mid.queries.map((q) => `${q.label} ${ms(q.ms)}`).join(', ')]);
    }
    printTable(['report', 'period', 'queries', 'engine ms (sum)', 'request ms', 'queries'], trows);

    stopLive();
    await deps.sink.flush();
    console.log(`\nlive events sent during timing: ${liveSent} (${liveDropped} dropped or refused); ${load()}`);
    console.log(`live batches written: ${batchWrites.length}, ${ms(percentile(batchWrites, 50))} / ${ms(percentile(batchWrites, 95))} ms each (p50 / p95) until stored and the data version moved`);
    console.log(hostCalibrationLine() + ', after the run');
  } finally {
    stopLive();
    await runtime.close();
    if (duringImport) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A short name for a query: the rows-after-now check, else the first table it reads. */
function queryLabel(sql: string): string {
  if (/AS latest, count\(\) AS n FROM/.test(sql)) return 'later-check';
  const table = /FROM\s+([A-Za-z_][A-Za-z0-9_.]*)/.exec(sql)?.[1];
  return /GROUP BY session_id|groupArray|argMin/.test(sql) && table === 'events' ? 'events(visits)' : (table ?? 'query');
}

function printTable(header: string[], rows: string[][]) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

await main();
