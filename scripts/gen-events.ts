/**
 * Benchmark data generator: 10M events for one project over 90 days plus 40M for 49 other
 * projects (times `--scale`), generated inside ClickHouse with `INSERT … SELECT … FROM numbers()`
 * so no row passes through JS. Every value is a deterministic hash of the row number, so two runs
 * at one scale produce the same data (relative to the stored `now`).
 *
 * Shape: sessions of 5 events; ~64 % pageviews, ~30 % leaves, ~3 % custom, 0.5 % transactions,
 * 2.5 % vitals; Zipf paths (5 000 distinct) and referrers (500, 45 % direct); 200 countries with
 * Zipf weights; a diurnal curve peaking at 15:00 UTC; ~14 events per visitor.
 *
 * Usage: `tsx scripts/gen-events.ts [--scale 0.1] [--force]` (the benchmark calls it itself).
 * Data lives in `.bench-data/scale-{scale}` and is reused when present.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ClickHouseClient } from '../src/adapters/clickhouse.js';
import { connectNodeClickHouse } from '../src/adapters/node-clickhouse.js';
import { migrate } from '../src/adapters/migrate.js';
import { closedHoursEnd } from '../src/adapters/versioned-row-store.js';

/** A valid project id (prj_ + 20 base62 characters): report routes refuse any other shape. */
export const MAIN_PROJECT_ID = 'prj_benchmain00000000000';
export const OTHER_PROJECTS = 49;
const MAIN_EVENTS = 10_000_000;
const OTHER_EVENTS = 40_000_000;
const DAYS = 90;
/** Rows per INSERT: small enough that the materialized views keep up and memory stays flat. */
const CHUNK = 5_000_000;
const ROLLUPS = [
  'stats_15m', 'pages_15m', 'referrers_15m', 'countries_15m', 'cities_15m', 'tech_15m', 'custom_events_15m',
  'stats_1d', 'pages_1d', 'referrers_1d', 'countries_1d', 'cities_1d', 'tech_1d', 'custom_events_1d',
] as const;

export interface BenchMeta {
  scale: number;
  /** The instant the data ends at; the benchmark pins its clock here so reruns see the same periods. */
  now: number;
  mainProjectId: string;
  mainEvents: number;
  otherEvents: number;
  generatedInSeconds: number;
}

/** `.bench-data/scale-{scale}`: one persistent data directory per scale. */
export const benchDataDir = (scale: number) => resolve('.bench-data', `scale-${scale}`);
const metaPath = (dir: string) => resolve(dir, 'bench-meta.json');

/** Reads `--name value` from argv. */
export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** `--scale` as a number in (0, 1]; default 1. */
export function scaleArg(): number {
  const raw = argValue('scale') ?? '1';
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1) throw new Error(`--scale must be a number in (0, 1], got ${raw}`);
  return scale;
}

/** 200 ISO 3166-1 alpha-2 codes with English names, the most visited first (Zipf rank order). */
export function countryList(): { codes: string[]; names: string[] } {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const notCountries = new Set(['EU', 'EZ', 'UN', 'QO', 'XA', 'XB', 'ZZ', 'AC', 'CP', 'DG', 'EA', 'IC', 'TA', 'CQ']);
  const top = ['US', 'DE', 'GB', 'IN', 'FR', 'CA', 'BR', 'NL', 'ES', 'IT', 'JP', 'AU', 'PL', 'SE', 'CH'];
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const all: string[] = [];
  for (const a of letters) for (const b of letters) {
    const code = a + b;
    if (!notCountries.has(code) && names.of(code) && !top.includes(code)) all.push(code);
  }
  const codes = [...top, ...all].slice(0, 200);
  return { codes, names: codes.map((c) => names.of(c) as string) };
}

/**
 * One chunk of synthetic events. `h(x, salt)` = cityHash64 keeps it deterministic; `u(…)` maps
 * a hash to [0, 1). Zipf(1) ranks come from `floor(N ^ u)` (log-uniform). Session-level values
 * (time, referrer) hash the session number, visitor-level ones (country, device) the visitor.
 */
const INSERT_CHUNK_SQL = `
INSERT INTO events (project_id, ts, kind, visitor_id, session_id, session_floor, hostname, path, referrer, referrer_source,
  country_code, country_name, city, device, browser, os, screen_width, event_name, amount_cents, currency,
  duration_ms, lcp, inp, cls, fcp, ttfb)
SELECT
  {projects:Array(String)}[1 + cityHash64(s, 7) % length({projects:Array(String)})] AS project_id,
  toDateTime64(raw_ts - shift, 3, 'UTC') AS ts,
  multiIf(uk < 0.30, 'leave', uk < 0.33, 'custom', uk < 0.335, 'transaction', uk < 0.36, 'vitals', 'pageview') AS kind,
  visitor_id,
  cityHash64(s, 6) AS session_id,
  -- As live ingestion bounds a session (README "Visits of closed hours").
  toDateTime(session_start - shift - 1800, 'UTC') AS session_floor,
  'bench.example' AS hostname,
  if(path_rank = 1, '/', concat('/page/', toString(path_rank))) AS path,
  if(direct, '', concat('https://ref', toString(ref_rank), '.example.org/post')) AS referrer,
  if(direct, '(direct)', concat('ref', toString(ref_rank), '.example.org')) AS referrer_source,
  {codes:Array(String)}[country_rank] AS country_code,
  {names:Array(String)}[country_rank] AS country_name,
  if(cityHash64(visitor_id, 12) % 10 < 3, '', concat({names:Array(String)}[country_rank], ' City ', toString(cityHash64(visitor_id, 13) % 20))) AS city,
  multiIf(ud < 0.55, 'Desktop', ud < 0.90, 'Mobile', ud < 0.97, 'Tablet', 'Unknown') AS device,
  ['Chrome', 'Safari', 'Firefox', 'Edge', 'Samsung Internet', 'Opera', 'Brave', 'Vivaldi', 'Yandex', 'UC Browser'][least(10, toUInt32(floor(pow(10, cityHash64(visitor_id, 14) % 1000000 / 1e6))))] AS browser,
  ['Windows', 'iOS', 'Android', 'macOS', 'Linux', 'Chrome OS', 'iPadOS', 'Ubuntu'][least(8, toUInt32(floor(pow(8, cityHash64(visitor_id, 15) % 1000000 / 1e6))))] AS os,
  [360, 390, 414, 768, 1280, 1440, 1920][1 + cityHash64(visitor_id, 16) % 7] AS screen_width,
  multiIf(kind = 'custom', ['signup', 'download', 'outbound', 'play', 'share', 'subscribe', 'search', 'contact', 'login', 'invite'][least(10, toUInt32(floor(pow(10, cityHash64(n, 17) % 1000000 / 1e6))))],
          kind = 'transaction', if(cityHash64(n, 18) % 3 = 0, 'upgrade', 'purchase'), '') AS event_name,
  if(kind = 'transaction', toInt64(100 + cityHash64(n, 19) % 50000), 0) AS amount_cents,
  if(kind = 'transaction', if(cityHash64(n, 20) % 10 = 0, 'EUR', 'USD'), '') AS currency,
  if(kind = 'leave', toUInt32(1000 + cityHash64(n, 21) % 600000), 0) AS duration_ms,
  if(kind = 'vitals', toFloat32(400 + cityHash64(n, 22) % 4000), NULL) AS lcp,
  if(kind = 'vitals', toFloat32(20 + cityHash64(n, 23) % 600), NULL) AS inp,
  if(kind = 'vitals', toFloat32(cityHash64(n, 24) % 400 / 1000), NULL) AS cls,
  if(kind = 'vitals', toFloat32(200 + cityHash64(n, 25) % 3000), NULL) AS fcp,
  if(kind = 'vitals', toFloat32(50 + cityHash64(n, 26) % 1500), NULL) AS ttfb
FROM
(
  SELECT
    number AS n,
    intDiv(n, 5) AS s,
    cityHash64(s, 2) % 1000000 / 1e6 AS utod,
    -- t = u - a·sin(2πu)/(2π) has density ∝ 1/(1 - a·cos 2πu): a smooth daily peak, moved to 15:00 UTC.
    toUInt32((toUInt32((utod - 0.5 * sin(2 * pi() * utod) / (2 * pi())) * 86400) + 54000) % 86400) AS secs,
    toUInt32({t0:UInt32} + (cityHash64(s, 1) % {days:UInt32}) * 86400 + secs) AS session_start,
    toUInt32(session_start + (n % 5) * 45 + cityHash64(n, 3) % 30) AS raw_ts,
    -- A session that would reach past now is moved back a week, whole.
    if(session_start + 210 >= {now:UInt32}, 7 * 86400, 0) AS shift,
    cityHash64(cityHash64(s, 4) % {visitors:UInt64}, {project_salt:UInt64}) AS visitor_id,
    cityHash64(n, 7) % 1000000 / 1e6 AS uk,
    toUInt32(floor(pow(5000, cityHash64(n, 8) % 1000000 / 1e6))) AS path_rank,
    cityHash64(s, 9) % 100 < 45 AS direct,
    toUInt32(floor(pow(500, cityHash64(s, 10) % 1000000 / 1e6))) AS ref_rank,
    least(200, toUInt32(floor(pow(200, cityHash64(visitor_id, 11) % 1000000 / 1e6)))) AS country_rank,
    cityHash64(visitor_id, 5) % 1000000 / 1e6 AS ud
  FROM numbers({start:UInt64}, {count:UInt64})
)`;

async function insertChunks(
  ch: ClickHouseClient,
  o: { first: number; total: number; projects: string[]; visitors: number; salt: number; t0: number; now: number },
  log: (line: string) => void,
) {
  const { codes, names } = countryList();
  for (let done = 0; done < o.total; done += CHUNK) {
    const count = Math.min(CHUNK, o.total - done);
    const started = Date.now();
    await ch.command({
      query: INSERT_CHUNK_SQL,
      query_params: {
        projects: o.projects, codes, names, start: o.first + done, count, t0: o.t0, now: o.now, days: DAYS,
        visitors: o.visitors, project_salt: o.salt,
      },
      clickhouse_settings: { max_partitions_per_insert_block: '1000' },
    });
    log(`  inserted ${(done + count).toLocaleString('en')} / ${o.total.toLocaleString('en')} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}

/**
 * The instant a benchmark's data ends and its clock stands: the last second of the previous UTC
 * hour, so a period ending now has a whole hour of sessions since its parts' cut (README "Visits
 * of closed hours"), the most a read from parts ever regroups.
 */
export const benchNow = (at: number = Date.now()): number => closedHoursEnd(at) - 1000;

/** Generates every event of the benchmark at `scale`, then merges the rollups. */
export async function generateEvents(ch: ClickHouseClient, scale: number, log: (line: string) => void = console.log): Promise<BenchMeta> {
  const started = Date.now();
  const now = Math.floor(benchNow() / 1000);
  // Day 0 is midnight UTC 89 days before today, so `90d` in UTC covers every generated row.
  const t0 = Math.floor(now / 86400) * 86400 - (DAYS - 1) * 86400;
  const mainEvents = Math.round(MAIN_EVENTS * scale);
  const otherEvents = Math.round(OTHER_EVENTS * scale);
  log(`generating ${mainEvents.toLocaleString('en')} events for ${MAIN_PROJECT_ID} and ${otherEvents.toLocaleString('en')} for ${OTHER_PROJECTS} other projects`);
  await insertChunks(ch, { first: 0, total: mainEvents, projects: [MAIN_PROJECT_ID], visitors: Math.max(1, Math.round(mainEvents / 14)), salt: 1, t0, now }, log);
  const others = Array.from({ length: OTHER_PROJECTS }, (_, i) => `prj_bench_${String(i + 1).padStart(2, '0')}`);
  await insertChunks(ch, { first: mainEvents, total: otherEvents, projects: others, visitors: Math.max(1, Math.round(otherEvents / 14)), salt: 2, t0, now }, log);
  for (const table of ['events', ...ROLLUPS]) {
    const t = Date.now();
    await ch.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    log(`  OPTIMIZE TABLE ${table} FINAL (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  }
  return {
    scale, now: now * 1000, mainProjectId: MAIN_PROJECT_ID, mainEvents, otherEvents,
    generatedInSeconds: Math.round((Date.now() - started) / 1000),
  };
}

/**
 * Returns the stored metadata when `dir` already holds this scale's data, else generates it.
 * A run interrupted mid-way leaves no metadata, so its partial data is thrown away and redone.
 */
export async function ensureBenchData(
  ch: ClickHouseClient, dir: string, scale: number, log: (line: string) => void = console.log,
): Promise<BenchMeta> {
  if (existsSync(metaPath(dir))) {
    const meta = JSON.parse(readFileSync(metaPath(dir), 'utf8')) as BenchMeta;
    if (meta.scale === scale) {
      log(`reusing data in ${dir} (generated for ${new Date(meta.now).toISOString()})`);
      return meta;
    }
  }
  for (const table of ['events', ...ROLLUPS, 'bot_hits', 'bots_15m']) await ch.command({ query: `TRUNCATE TABLE IF EXISTS ${table}` });
  const meta = await generateEvents(ch, scale, log);
  writeFileSync(metaPath(dir), JSON.stringify(meta, null, 2));
  log(`generated in ${meta.generatedInSeconds} s`);
  return meta;
}

/** Opens the benchmark's embedded ClickHouse for `scale` (migrated), creating the directory. */
export async function openBenchClickHouse(scale: number, opts: { force?: boolean } = {}): Promise<{ ch: ClickHouseClient; dir: string }> {
  const dir = benchDataDir(scale);
  if (opts.force) rmSync(dir, { recursive: true, force: true });
  const { client: ch } = await connectNodeClickHouse({ dataDir: dir });
  await migrate(ch, { retentionDays: 3650 });
  return { ch, dir };
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const scale = scaleArg();
  const { ch, dir } = await openBenchClickHouse(scale, { force: process.argv.includes('--force') });
  const meta = await ensureBenchData(ch, dir, scale);
  console.log(JSON.stringify(meta));
  await ch.close();
}
