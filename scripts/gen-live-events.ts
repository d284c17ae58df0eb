/**
 * Benchmark data in the "live" shape: the same volume as scripts/gen-events.ts (10M events for the
 * main project over 90 days plus 40M for 49 others, times `--scale`), but written the way
 * production writes it. Every row is built by the ingest pipeline's own `eventRow` and goes
 * through the write port (`RowStore.insert` via `insertLines`) in batches of 50,000 rows, in time
 * order, every batch mixing all projects as live traffic does. Batches are RowBinary as a bulk
 * import sends them (`--encoding json`: JSONEachRow as the batcher sends them; same rows, slower).
 * Parts are left to the background merges (no OPTIMIZE FINAL).
 *
 * Shape, per visit (one session id): a visitor, new 90 % of the time (ids are daily-salted hashes,
 * so few repeat); 1–8 pageviews (half the visits bounce); a custom event after ~12 % of pageviews
 * (~10 % of counted events); a leave event with its duration after ~30 % of pageviews; a landing
 * source out of 10 (direct, search, social, a utm-tagged newsletter and paid search); one of 30
 * countries with regions and cities; 2,000 paths with Zipf weights. That gives ≈ 0.3 visitors per
 * event. A seeded PRNG makes two runs at one scale produce the same rows (relative to `now`).
 *
 * Usage: `tsx scripts/gen-live-events.ts [--scale 0.1] [--force] [--encoding json]` (the benchmark calls it itself).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ClickHouseClient } from '../src/adapters/clickhouse.js';
import { migrate } from '../src/adapters/migrate.js';
import { connectNodeClickHouse } from '../src/adapters/node-clickhouse.js';
import type { RowStore } from '../src/adapters/row-store.js';
import { RowBinaryWriter, rowBinaryEncoder } from '../src/adapters/rowbinary.js';
import { insertLines, RowBuffer, TABLE_COLUMNS } from '../src/ingest/insert.js';
import { SESSION_IDLE_MS } from '../src/ingest/enrich/session.js';
import { eventRow, type EventFields } from '../src/ingest/pipeline.js';
import { argValue, benchNow, countryList, MAIN_PROJECT_ID, OTHER_PROJECTS, scaleArg, type BenchMeta } from './gen-events.js';
import { seededRandom, zipf } from './seeded-random.js';

const MAIN_EVENTS = 10_000_000;
const OTHER_EVENTS = 40_000_000;
const DAYS = 90;
/** Rows per insert: a full batch of the Node batcher under heavy traffic. */
const BATCH_ROWS = 50_000;
const DAY_MS = 86_400_000;

/** The main project's domain (the benchmark registers it under this name). */
export const MAIN_DOMAIN = 'bench-main.example';

/** `.bench-data/live-scale-{scale}`: the live-shape data of one scale. */
export const liveBenchDataDir = (scale: number) => resolve('.bench-data', `live-scale-${scale}`);
const metaPath = (dir: string) => resolve(dir, 'bench-meta.json');

/** A sampler over explicit weights. */
function weighted<T>(items: readonly (readonly [T, number])[]): (u: number) => T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  return (u) => {
    let x = u * total;
    for (const [item, w] of items) if ((x -= w) < 0) return item;
    return items[items.length - 1]![0];
  };
}

/** 2,000 paths, the most visited first: home, a few named pages, then blog posts, docs and products. */
export const LIVE_PATHS: readonly string[] = (() => {
  const named = ['/', '/pricing', '/blog', '/docs', '/about', '/signup', '/login', '/contact'];
  const out = [...named];
  for (let r = out.length + 1; out.length < 2000; r++) {
    out.push(r % 3 === 0 ? `/blog/post-${r}` : r % 3 === 1 ? `/docs/page-${r}` : `/product/item-${r}`);
  }
  return out;
})();

/** Landing sources: referrer URL and landing-URL query; 10 distinct `referrer_source` values. */
const SOURCES = weighted<{ referrer: string; query: string }>([
  [{ referrer: '', query: '' }, 38],
  [{ referrer: 'https://www.google.com/', query: '' }, 24],
  [{ referrer: 'https://www.google.com/', query: '?utm_source=google&utm_medium=cpc&utm_campaign=brand&utm_term=analytics' }, 4],
  [{ referrer: 'https://www.bing.com/', query: '' }, 4],
  [{ referrer: 'https://duckduckgo.com/', query: '' }, 3],
  [{ referrer: 'https://news.ycombinator.com/', query: '' }, 6],
  [{ referrer: 'https://www.reddit.com/r/webdev/', query: '' }, 5],
  [{ referrer: 'https://t.co/abc', query: '' }, 4],
  [{ referrer: 'https://github.com/some/repo', query: '' }, 4],
  [{ referrer: '', query: '?utm_source=newsletter&utm_medium=email&utm_campaign=weekly&utm_content=top-link' }, 5],
  [{ referrer: 'https://www.facebook.com/', query: '?utm_source=facebook&utm_medium=social&utm_campaign=launch' }, 3],
]);
const CUSTOM_NAMES = ['signup', 'download', 'outbound', 'play', 'share', 'subscribe', 'search', 'contact', 'login', 'invite'];
const DEVICES = weighted<{ device: string; os: readonly string[]; width: number }>([
  [{ device: 'Desktop', os: ['Windows', 'macOS', 'Linux', 'Chrome OS'], width: 1440 }, 55],
  [{ device: 'Mobile', os: ['Android', 'iOS'], width: 390 }, 40],
  [{ device: 'Tablet', os: ['iPadOS', 'Android'], width: 768 }, 5],
]);
const BROWSERS = ['Chrome', 'Safari', 'Firefox', 'Edge', 'Samsung Internet', 'Opera'];
/** Pageviews per visit, 1–8: half the visits see one page. */
const PAGEVIEWS = weighted<number>([[1, 50], [2, 20], [3, 10], [4, 7], [5, 5], [6, 4], [7, 2], [8, 2]]);

interface ProjectPlan {
  id: string;
  domain: string;
  /** Events to generate per day. */
  perDay: number;
  nextVisitor: number;
  recent: string[];
}

interface PlannedEvent {
  kind: EventFields['kind'];
  at: number;
  path: number;
  name?: string;
  durationMs?: number;
}

interface Visit {
  project: ProjectPlan;
  start: number;
  visitorId: string;
  sessionId: string;
  source: { referrer: string; query: string };
  country: number;
  region: string;
  city: string;
  device: { device: string; os: readonly string[]; width: number };
  os: string;
  browser: string;
  events: PlannedEvent[];
}

const id53 = (rand: () => number) => String(Math.floor(rand() * 2 ** 21) * 2 ** 32 + Math.floor(rand() * 2 ** 32));

/** The visits of one project on one day, enough for its share of events, with their events planned. */
function planDay(p: ProjectPlan, dayStart: number, now: number, rand: () => number, pickPath: (u: number) => number, pickCountry: (u: number) => number): Visit[] {
  const visits: Visit[] = [];
  let events = 0;
  while (events < p.perDay) {
    // t = u - a·sin(2πu)/(2π) has density ∝ 1/(1 - a·cos 2πu): a daily peak, moved to 15:00 UTC.
    const u = rand();
    const secs = (Math.floor((u - (0.5 * Math.sin(2 * Math.PI * u)) / (2 * Math.PI)) * 86400) + 54000) % 86400;
    const start = dayStart + secs * 1000 + Math.floor(rand() * 1000);
    let visitorId: string;
    if (p.recent.length > 100 && rand() < 0.1) visitorId = p.recent[Math.floor(rand() * p.recent.length)]!;
    else {
      visitorId = id53(rand);
      p.nextVisitor++;
      if (p.recent.length < 5000) p.recent.push(visitorId);
      else p.recent[p.nextVisitor % 5000] = visitorId;
    }
    const country = pickCountry(rand());
    const device = DEVICES(rand());
    const visit: Visit = {
      project: p, start, visitorId, sessionId: id53(rand), source: SOURCES(rand()), country,
      region: rand() < 0.1 ? '' : `R${Math.floor(rand() * 4)}`,
      city: '', device, os: device.os[Math.floor(rand() * device.os.length)]!,
      browser: BROWSERS[Math.min(BROWSERS.length - 1, Math.floor(Math.pow(BROWSERS.length, rand())) - 1)]!,
      events: [],
    };
    visit.city = visit.region === '' || rand() < 0.1 ? '' : `City ${visit.region}-${Math.floor(rand() * 10)}`;
    let at = start;
    const pageviews = PAGEVIEWS(rand());
    for (let i = 0; i < pageviews; i++) {
      const path = pickPath(rand());
      visit.events.push({ kind: 'pageview', at, path });
      if (rand() < 0.12) visit.events.push({ kind: 'custom', at: at + 2000 + Math.floor(rand() * 20_000), path, name: CUSTOM_NAMES[Math.floor(Math.pow(10, rand())) - 1]! });
      const dwell = Math.floor(5000 + Math.exp(rand() * 11)); // 5 s … ~65 s typical, a long tail to ~16 min
      if (rand() < 0.3) visit.events.push({ kind: 'leave', at: at + dwell, path, durationMs: dwell });
      at += dwell + Math.floor(rand() * 3000);
    }
    // The day's last visits are cut at now: nothing is stored after it. What falls after now still counts toward the
    // day's share, so today holds the events of its hours so far, not a whole day's squeezed into them.
    events += visit.events.length;
    visit.events = visit.events.filter((e) => e.at <= now);
    if (visit.events.length) visits.push(visit);
  }
  return visits;
}

/**
 * How batches are encoded for the write port: `json` as the Node batcher sends live events
 * (JSONEachRow), `rowbinary` as a bulk import sends them where the store takes RowBinary (the
 * embedded engine): the same rows, parsed ~3× faster, so scale 1 generates in reasonable time.
 */
export type LiveEncoding = 'json' | 'rowbinary';

/** Generates the live-shape events at `scale` through `store`; answers the metadata. */
export async function generateLiveEvents(store: RowStore, scale: number, log: (line: string) => void = console.log, encoding: LiveEncoding = 'rowbinary'): Promise<BenchMeta> {
  const started = Date.now();
  const now = benchNow();
  const t0 = Math.floor(now / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS;
  const mainEvents = Math.round(MAIN_EVENTS * scale);
  const otherEvents = Math.round(OTHER_EVENTS * scale);
  const projects: ProjectPlan[] = [
    { id: MAIN_PROJECT_ID, domain: MAIN_DOMAIN, perDay: mainEvents / DAYS, nextVisitor: 0, recent: [] },
    ...Array.from({ length: OTHER_PROJECTS }, (_, i): ProjectPlan => {
      const n = String(i + 1).padStart(2, '0');
      return { id: `prj_bench_${n}`, domain: `bench-${n}.example`, perDay: otherEvents / OTHER_PROJECTS / DAYS, nextVisitor: 0, recent: [] };
    }),
  ];
  log(`generating ~${mainEvents.toLocaleString('en')} live-shape events for ${MAIN_PROJECT_ID} and ~${otherEvents.toLocaleString('en')} for ${OTHER_PROJECTS} other projects, ${BATCH_ROWS.toLocaleString('en')} rows per insert`);
  const rand = seededRandom(20_240_614 + Math.round(scale * 1000));
  const pickPath = zipf(LIVE_PATHS.length);
  const pickCountry = zipf(30);
  const { codes } = countryList();
  const urls = new Map<string, URL>();
  const urlOf = (domain: string, path: string, query: string) => {
    const text = `https://${domain}${path}${query}`;
    let url = urls.get(text);
    if (!url) urls.set(text, (url = new URL(text)));
    return url;
  };

  const binary = encoding === 'rowbinary' && store.rowBinaryTypes ? await store.rowBinaryTypes('events') : undefined;
  const encode = binary
    ? rowBinaryEncoder(TABLE_COLUMNS.events.map((name) => ({ name, type: binary.get(name) ?? '' })))
    : undefined;
  const newBuffer = () => (encode ? new RowBinaryWriter(BATCH_ROWS * 200) : new RowBuffer(BATCH_ROWS * 400));
  let buffer = newBuffer();
  const append = (row: Record<string, unknown>, at: number) => {
    if (!encode) return (buffer as RowBuffer).append(row);
    row.ts = at; // RowBinary DateTime64(3) takes epoch ms
    encode(buffer as RowBinaryWriter, row);
  };
  log(`  encoding: ${encode ? 'RowBinary (the import path)' : 'JSONEachRow (the batcher path)'}`);
  let inFlight: Promise<void> = Promise.resolve();
  let batches = 0;
  let rows = 0;
  let insertMs = 0;
  let lastLog = Date.now();
  // One insert in flight while the next batch is built, as the batcher seals one while filling the next.
  const seal = async () => {
    const body = buffer.bytes();
    const token = `bench-live:${scale}:${batches++}`;
    buffer = newBuffer();
    await inFlight;
    inFlight = (async () => {
      const t = Date.now();
      await insertLines(store, 'events', body, encode ? { token, format: 'RowBinary', bulk: true } : { token });
      insertMs += Date.now() - t;
    })();
    if (Date.now() - lastLog > 30_000) {
      lastLog = Date.now();
      log(`  ${rows.toLocaleString('en')} rows in ${batches} inserts (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
  };

  let visitors = 0;
  let visits = 0;
  let mainRows = 0;
  const mainSeen = new Set<string>();
  for (let day = 0; day < DAYS; day++) {
    const dayStart = t0 + day * DAY_MS;
    const dayVisits = projects.flatMap((p) => planDay(p, dayStart, now, rand, pickPath, pickCountry));
    dayVisits.sort((a, b) => a.start - b.start);
    for (const v of dayVisits) {
      const project = { id: v.project.id, domain: v.project.domain };
      if (v.project.id === MAIN_PROJECT_ID) {
        visits++;
        mainRows += v.events.length;
        if (!mainSeen.has(v.visitorId)) {
          mainSeen.add(v.visitorId);
          visitors++;
        }
      }
      const dims = {
        visitorId: v.visitorId, sessionId: v.sessionId, sessionFloorMs: v.start - SESSION_IDLE_MS, countryCode: codes[v.country]!, region: v.region, city: v.city,
        device: v.device.device, browser: v.browser, browserVersion: '120', os: v.os, osVersion: '',
      };
      let previous = '';
      for (const e of v.events) {
        const landing = previous === '' && e.kind === 'pageview';
        const path = LIVE_PATHS[e.path]!;
        const url = urlOf(v.project.domain, path, landing ? v.source.query : '');
        // The landing pageview carries the external referrer; later ones come from the site itself.
        const referrer = landing ? v.source.referrer : previous;
        const fields: EventFields = { kind: e.kind, url, referrer, screenWidth: v.device.width };
        if (e.name) fields.name = e.name;
        if (e.durationMs) fields.durationMs = e.durationMs;
        append(eventRow(project, fields, e.at, dims), e.at);
        if (e.kind === 'pageview') previous = `https://${v.project.domain}${path}`;
        rows++;
        if (buffer.rows >= BATCH_ROWS) await seal();
      }
    }
  }
  if (buffer.rows) await seal();
  await inFlight;
  log(`  ${rows.toLocaleString('en')} rows in ${batches} inserts; ${(insertMs / 1000).toFixed(0)} s inside inserts`);
  log(`  ${MAIN_PROJECT_ID}: ${mainRows.toLocaleString('en')} events, ${visits.toLocaleString('en')} visits, ${visitors.toLocaleString('en')} visitors (${(visitors / mainRows).toFixed(2)} per event)`);
  return {
    scale, now, mainProjectId: MAIN_PROJECT_ID, mainEvents: mainRows, otherEvents: rows - mainRows,
    generatedInSeconds: Math.round((Date.now() - started) / 1000),
  };
}

/**
 * Waits until no merge runs on `tables` (default: the raw events; 'all': every table, the
 * rollups' too) or `maxMs` passes, so timings do not share the cores with merges.
 */
export async function waitForMerges(ch: ClickHouseClient, log: (line: string) => void, maxMs = 300_000, tables: 'events' | 'all' = 'events'): Promise<void> {
  const started = Date.now();
  const where = tables === 'all' ? 'database = currentDatabase()' : "table = 'events'";
  let seen = 0;
  for (;;) {
    const rs = await ch.query({ query: `SELECT count() AS n FROM system.merges WHERE ${where}`, format: 'JSONEachRow' });
    const [{ n }] = await rs.json<{ n: string | number }>();
    seen = Math.max(seen, Number(n));
    if (Number(n) === 0 || Date.now() - started > maxMs) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const parts = await ch.query({ query: "SELECT count() AS parts, sum(rows) AS rows FROM system.parts WHERE table = 'events' AND active", format: 'JSONEachRow' });
  const [p] = await parts.json<{ parts: string | number; rows: string | number }>();
  log(`  events: ${p!.parts} active parts, ${Number(p!.rows).toLocaleString('en')} rows (after ${((Date.now() - started) / 1000).toFixed(0)} s of waiting for merges${tables === 'all' ? ` of every table, at most ${seen} at once` : ''})`);
}

/**
 * The stored metadata when `dir` already holds live-shape data of this scale, else generates it
 * through `store`. A run interrupted mid-way leaves no metadata, so its partial data is redone.
 */
export async function ensureLiveBenchData(
  ch: ClickHouseClient, store: RowStore, dir: string, scale: number, log: (line: string) => void = console.log,
): Promise<BenchMeta> {
  if (existsSync(metaPath(dir))) {
    const meta = JSON.parse(readFileSync(metaPath(dir), 'utf8')) as BenchMeta;
    if (meta.scale === scale) {
      log(`reusing live-shape data in ${dir} (generated for ${new Date(meta.now).toISOString()} in ${meta.generatedInSeconds} s)`);
      return meta;
    }
  }
  const rollups = await ch.query({ query: "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND name != 'schema_migrations'", format: 'JSONEachRow' });
  for (const { name } of await rollups.json<{ name: string }>()) await ch.command({ query: `TRUNCATE TABLE IF EXISTS ${name}` });
  const meta = await generateLiveEvents(store, scale, log, argValue('encoding') === 'json' ? 'json' : 'rowbinary');
  await waitForMerges(ch, log);
  writeFileSync(metaPath(dir), JSON.stringify(meta, null, 2));
  log(`generated in ${meta.generatedInSeconds} s`);
  return meta;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const scale = scaleArg();
  const dir = liveBenchDataDir(scale);
  if (process.argv.includes('--force')) rmSync(dir, { recursive: true, force: true });
  const { client: ch, rowStore } = await connectNodeClickHouse({ dataDir: dir });
  await migrate(ch, { retentionDays: 3650 });
  const meta = await ensureLiveBenchData(ch, rowStore, dir, scale);
  console.log(JSON.stringify(meta));
  await ch.close();
}
