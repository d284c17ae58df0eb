import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { withQuery } from '../../src/adapters/clickhouse.js';
import { toClickHouseDateTime64 } from '../../src/adapters/clickhouse-time.js';
import type { Deps } from '../../src/deps.js';
import { closedDaysOf } from '../../src/reports/day-parts.js';
import { measureGoals, type GoalRow } from '../../src/reports/defs/goals.js';
import { StoredParts } from '../../src/reports/stored-parts.js';
import { resolvePeriod } from '../../src/reports/periods.js';
import { periodParams } from '../../src/reports/query.js';
import { findReport } from '../../src/reports/registry.js';
import type { PlannedReport } from '../../src/reports/planned.js';
import type { Source } from '../../src/reports/planner.js';
import { getProject } from '../../src/projects/store.js';
import { PART_FAMILIES, PART_TABLES } from '../../src/reports/sql/window.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Half past noon UTC: the closed days end at today's midnight, 30 or 90 days after the period's first whole day. */
const NOW = Date.parse('2026-03-08T12:30:00Z');
const clock = fixedClock(NOW);

let h: Harness;
let alice: TestUser;
beforeAll(async () => {
  h = await createHarness({ clock });
  alice = await h.user('day-parts');
});
afterAll(closeHarness);

const PATHS = ['/', '/pricing', '/blog/a', '/blog/b', '/Über', '/50%off'];
const PLACES = [
  { countryCode: 'US', countryName: 'United States', city: 'New York' },
  { countryCode: 'DE', countryName: 'Germany', city: 'Berlin' },
  { countryCode: 'DE', countryName: 'Germany', city: 'Munich' },
  { countryCode: 'IN', countryName: 'India', city: '' },
];
const TECH = [
  { device: 'Desktop', browser: 'Chrome', os: 'Windows' },
  { device: 'Mobile', browser: 'Safari', os: 'iOS' },
  { device: 'Mobile', browser: '', os: 'Android' },
];

/** Visits spread over 100 days before NOW (a few of them today), every value of every family, custom events and transactions among them. */
function visits(count: number, seed: number, within: (i: number) => number): GenEvent[] {
  const events: GenEvent[] = [];
  for (let i = 0; i < count; i++) {
    const n = i * 7919 + seed;
    const ts = within(i);
    const visitor = 1 + (n % 37);
    const session = seed * 100_000 + i;
    const common = { visitor, session, ...PLACES[n % PLACES.length]!, ...TECH[(n >> 2) % TECH.length]! };
    events.push(makeEvent({ ts, path: PATHS[n % PATHS.length]!, ...common }));
    if (n % 3 === 0) events.push(makeEvent({ ts: ts + MINUTE, path: PATHS[(n + 1) % PATHS.length]!, ...common }));
    if (n % 4 === 0) events.push(makeEvent({ ts: ts + 2 * MINUTE, kind: 'custom', eventName: n % 8 === 0 ? 'signup' : 'download', ...common }));
    if (n % 9 === 0) events.push(makeEvent({ ts: ts + 3 * MINUTE, kind: 'transaction', eventName: 'order', amountCents: 1000 + (n % 500), currency: 'EUR', ...common }));
  }
  return events;
}
const spread = (i: number) => NOW - 100 * DAY + ((i * 829_348_951) % (100 * DAY - HOUR));

const REPORTS = ['pages', 'countries', 'cities', 'devices', 'events'] as const;
const PERIODS = ['30d', '90d', '7d'] as const;

async function project(timeZone = 'UTC'): Promise<{ id: string; domain: string }> {
  const domain = h.domain('parts');
  const res = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Parts', domain, timeZone } });
  return { id: ((await res.json()) as { id: string }).id, domain };
}

async function ask(domain: string, report: string, period: string): Promise<unknown> {
  const res = await h.call('GET', `/api/v1/projects/${domain}/${report}?period=${period}&limit=100`, { token: alice.readKey });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** The report computed from `source` (rollups with their parts, or raw events), past the answer cache. */
async function computed(p: { id: string }, report: string, period: string, source: Source, deps: Deps = h.deps): Promise<unknown> {
  const project = await getProject(h.deps.redis, p.id);
  const def = findReport(report) as PlannedReport;
  return def.compute({ deps, project: project!, role: 'owner' }, { period, limit: 100 }, source);
}

/** Every report and period: from the rollups (with the parts stored so far), and from raw events. */
async function answers(p: { id: string }) {
  const got: Record<string, unknown> = {};
  const want: Record<string, unknown> = {};
  for (const period of PERIODS)
    for (const report of REPORTS) {
      got[`${report} ${period}`] = await computed(p, report, period, 'rollup');
      want[`${report} ${period}`] = await computed(p, report, period, 'raw');
    }
  return { got, want };
}

/** Each family's stored parts of the project (their markers). */
async function partsStored(projectId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const family of PART_FAMILIES) {
    const rs = await h.deps.clickhouse.query({
      query: `SELECT part_key FROM ${PART_TABLES[family]} WHERE project_id = {id:String} AND marker = 1 ORDER BY part_key`,
      query_params: { id: projectId },
      format: 'JSONEachRow',
    });
    out[family] = ((await rs.json()) as { part_key: string }[]).map((r) => r.part_key);
  }
  return out;
}

describe('closed days of a period, merged in parts', () => {
  it('answers as the raw events do before, while and after the parts are stored, and reads them once stored', async () => {
    const p = await project();
    await insertEvents(h.deps.rowStore, p.id, visits(400, 1, spread));
    // Through the API first, as a dashboard asks: the parts are stored after these answers.
    for (const period of PERIODS) for (const report of REPORTS) expect(await ask(p.domain, report, period)).toEqual(await computed(p, report, period, 'raw'));
    await h.deps.background!.settled();
    const first = await answers(p);
    expect(first.got).toEqual(first.want);
    // Every list has rows of the closed days to merge.
    for (const period of PERIODS) for (const report of REPORTS) expect(JSON.stringify(first.got[`${report} ${period}`]).length, `${report} ${period}`).toBeGreaterThan(300);
    // 30d and 90d have closed days to keep; 7d too (six days). The devices, browsers and os lists are one part.
    const stored = await partsStored(p.id);
    for (const family of PART_FAMILIES) expect(stored[family], family).toHaveLength(3);

    // The part is what is read: a row added to it shows in the answer.
    const key30 = stored.pages!.find((k) => k.startsWith(String(Date.parse('2026-02-07T00:00:00Z'))))!;
    expect(key30).toBeDefined();
    await h.deps.clickhouse.command({
      query:
        "INSERT INTO pages_parts (project_id, bucket, path, pageviews, visitors, part_key, marker) SELECT {id:String}, toDateTime('2026-02-07 00:00:00', 'UTC'), '/only-in-the-part', 1000, uniqCombinedState(14)(toUInt64(1)), {key:String}, 0",
      query_params: { id: p.id, key: key30 },
    });
    const pages = (await computed(p, 'pages', '30d', 'rollup')) as { data: { path: string; pageviews: number }[] };
    expect(pages.data[0]).toMatchObject({ path: '/only-in-the-part', pageviews: 1000 });

    // The tech lists' part holds a row per device, per browser and per OS (migration 0029): a browser's row counts in
    // the browsers list alone.
    type TechLists = { devices: unknown[]; browsers: { name: string; visitors: number }[]; os: unknown[] };
    const before = (await computed(p, 'devices', '30d', 'rollup')) as TechLists;
    const techKey30 = stored.tech!.find((k) => k.startsWith(String(Date.parse('2026-02-07T00:00:00Z'))))!;
    await h.deps.clickhouse.command({
      query:
        "INSERT INTO tech_dimension_parts (project_id, bucket, dimension, name, pageviews, visitors, part_key, marker) SELECT {id:String}, toDateTime('2026-02-07 00:00:00', 'UTC'), 'browser', 'Only In The Part', 1000, uniqCombinedState(14)(number + 1000000), {key:String}, 0 FROM numbers(1000)",
      query_params: { id: p.id, key: techKey30 },
    });
    const after = (await computed(p, 'devices', '30d', 'rollup')) as TechLists;
    expect(after.browsers[0]).toEqual({ name: 'Only In The Part', visitors: 1000 });
    expect({ ...after, browsers: after.browsers.slice(1) }).toEqual(before);
  });

  it('keeps its parts through live traffic of the current hour, and merges them again after a write into closed hours', async () => {
    const p = await project();
    await insertEvents(h.deps.rowStore, p.id, visits(300, 2, spread));
    await answers(p);
    await h.deps.background!.settled();
    const before = await partsStored(p.id);

    // Live events since the start of the hour (each with its session's floor, as the tracker's carry): the closed
    // days are the same, the answers gain them.
    const live = visits(20, 3, (i) => NOW - 20 * MINUTE + i * 10_000).map((e) => ({ ...e, sessionFloor: NOW - 20 * MINUTE }));
    await insertEvents(h.deps.rowStore, p.id, live);
    const withLive = await answers(p);
    expect(withLive.got).toEqual(withLive.want);
    await h.deps.background!.settled();
    expect(await partsStored(p.id)).toEqual(before);

    // An import reaching ten days back moves the closed-hours version: new parts, the answers gain its rows at once.
    await insertEvents(h.deps.rowStore, p.id, visits(50, 4, (i) => NOW - 10 * DAY + i * HOUR));
    const imported = await answers(p);
    expect(imported.got).toEqual(imported.want);
    expect(imported.got).not.toEqual(withLive.got);
    await h.deps.background!.settled();
    const after = await partsStored(p.id);
    for (const family of PART_FAMILIES) expect(after[family]!.filter((k) => !before[family]!.includes(k)), family).toHaveLength(3);
    const again = await answers(p);
    expect(again.got).toEqual(imported.want);
  });

  it.each(['Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham'])('answers as the raw events do in %s, whose days are not UTC’s', async (timeZone) => {
    const p = await project(timeZone);
    await insertEvents(h.deps.rowStore, p.id, visits(300, 7, spread));
    await answers(p);
    await h.deps.background!.settled();
    expect((await partsStored(p.id)).pages!.length).toBeGreaterThan(0);
    const { got, want } = await answers(p);
    expect(got).toEqual(want);
  });

  it('a comparison and a past custom range read parts of their own closed days', async () => {
    const p = await project();
    await insertEvents(h.deps.rowStore, p.id, visits(300, 5, spread));
    const ranges = ['period=custom&from=2026-01-01&to=2026-01-31', 'period=30d&compare=previous_period'];
    const get = async (query: string) => {
      const out: Record<string, unknown> = {};
      for (const report of REPORTS) {
        const res = await h.call('GET', `/api/v1/projects/${p.domain}/${report}?${query}&limit=100`, { token: alice.readKey });
        expect(res.status).toBe(200);
        out[report] = await res.json();
      }
      return out;
    };
    const first = await Promise.all(ranges.map(get));
    await h.deps.background!.settled();
    const stored = await partsStored(p.id);
    const january = String(Date.parse('2026-01-01T00:00:00Z'));
    expect(stored.pages!.some((k) => k.startsWith(`${january}-${Date.parse('2026-02-01T00:00:00Z')}-`))).toBe(true);
    expect(await Promise.all(ranges.map(get))).toEqual(first);
  });
});

describe('goals read the closed days’ parts', () => {
  it('measure pageview, event and revenue goals as the daily rows do, and read the parts once stored', async () => {
    const p = await project();
    await insertEvents(h.deps.rowStore, p.id, visits(400, 6, spread));
    const goals = [
      { name: 'Blog', type: 'pageview', value: '/blog/*' },
      { name: 'Signup', type: 'event', value: 'signup' },
      { name: 'Orders', type: 'revenue', value: 'order' },
      { name: 'Everyone', type: 'traffic', value: '' },
    ];
    for (const body of goals) expect((await h.call('POST', `/api/v1/projects/${p.domain}/goals`, { token: alice.writeKey, body })).status).toBe(201);
    const period = resolvePeriod('30d', 'UTC', NOW);
    const current = (rows: GoalRow[]) => Object.fromEntries(rows.map((g) => [g.name, g.current]));
    const fromDailyRows = current(await measureGoals({ ...h.deps, storedParts: undefined, background: undefined }, p.id, period));
    expect(Object.values(fromDailyRows).every((n) => n > 0)).toBe(true);
    // The first measure stores the parts after its answer; the next reads them.
    expect(current(await measureGoals(h.deps, p.id, period))).toEqual(fromDailyRows);
    await h.deps.background!.settled();
    const stored = await partsStored(p.id);
    expect(stored.pages!.length).toBeGreaterThan(0);
    expect(stored.custom_events!.length).toBeGreaterThan(0);
    expect(current(await measureGoals(h.deps, p.id, period))).toEqual(fromDailyRows);
    // The part is what is read: a visitor of a blog page added to it counts for the pageview goal.
    const key30 = stored.pages!.find((k) => k.startsWith(String(Date.parse('2026-02-07T00:00:00Z'))))!;
    await h.deps.clickhouse.command({
      query:
        "INSERT INTO pages_parts (project_id, bucket, path, pageviews, visitors, part_key, marker) SELECT {id:String}, toDateTime('2026-02-07 00:00:00', 'UTC'), '/blog/only-in-the-part', 1, uniqCombinedState(14)(toUInt64(987654321)), {key:String}, 0",
      query_params: { id: p.id, key: key30 },
    });
    expect(current(await measureGoals(h.deps, p.id, period))).toEqual({ ...fromDailyRows, Blog: fromDailyRows.Blog! + 1 });
  });
});

describe('a list read from a part', () => {
  /** Pages and events of 30d from `source` with `limit`, and whether the rollup read ranked before merging. */
  async function lists(p: { id: string }, source: Source, limit: number) {
    const sent: string[] = [];
    const deps = { ...h.deps, clickhouse: withQuery(h.deps.clickhouse, (params) => (sent.push(params.query), h.deps.clickhouse.query(params))) };
    const project = await getProject(h.deps.redis, p.id);
    const out: Record<string, unknown> = {};
    for (const report of ['pages', 'events']) out[report] = await (findReport(report) as PlannedReport).compute({ deps, project: project!, role: 'owner' }, { period: '30d', limit }, source);
    await h.deps.background!.settled();
    return { out, ranked: sent.some((sql) => sql.includes('/* pre-rank */')) };
  }

  /** `paths` paths and a few event names over the closed days, each path seen 1–5 times (ties at every limit). */
  const manyValues = (paths: number): GenEvent[] =>
    Array.from({ length: paths }, (_, i) =>
      Array.from({ length: 1 + (i % 5) }, (_, j) => makeEvent({ ts: NOW - (2 + (i % 20)) * DAY + j * MINUTE, visitor: 1 + ((i + j) % 97), session: i * 10 + j, path: `/p/${i}`, ...(j === 4 ? { kind: 'custom' as const, eventName: `e${i % 7}` } : {}) })),
    ).flat();

  /**
   * `count` pageviews of five paths `/h/0`…`/h/4` from 5,003 visitors over 21 closed days, made by the engine (a row
   * each, as the import writes them; sent from here they take seconds): a part counting more pageviews than
   * MERGED_WHOLE_MOST in src/reports/day-parts.ts.
   */
  const heavyPageviews = (projectId: string, count: number) =>
    h.deps.clickhouse.command({
      query: `INSERT INTO events (project_id, ts, kind, visitor_id, session_id, hostname, path, referrer_source, country_code, country_name, city, device, browser, os)
SELECT {id:String}, {start:DateTime64(3, 'UTC')} + toIntervalMinute(number % 30000), 'pageview', 1 + number % 5003, 1000000 + number,
  'example.com', concat('/h/', toString(number % 5)), '(direct)', 'US', 'United States', 'New York', 'Desktop', 'Chrome', 'Windows'
FROM numbers({count:UInt32})`,
      query_params: { id: projectId, start: toClickHouseDateTime64(NOW - 25 * DAY), count },
    });

  it.each([
    ['merges every value of a part of few values', 30, 0, false],
    ['merges every value of a part of many values that counts few pageviews', 2_100, 0, false],
    ['ranks a part of many values and many pageviews first', 2_100, 300_000, true],
  ] as const)('%s: the lists raw events give, at every limit', async (_, paths, heavy, ranked) => {
    const p = await project();
    if (heavy) await heavyPageviews(p.id, heavy);
    await insertEvents(h.deps.rowStore, p.id, manyValues(paths));
    for (const limit of [3, 10, 100]) {
      const raw = await lists(p, 'raw', limit);
      // The first ask stores the parts, the second reads them.
      expect((await lists(p, 'rollup', limit)).out).toEqual(raw.out);
      expect(await lists(p, 'rollup', limit)).toEqual({ out: raw.out, ranked });
    }
  });
});

describe('what a process knows of its parts', () => {
  it('takes a part only once it has read its marker back: a store that inserted nothing leaves the daily rows read', async () => {
    const p = await project();
    await insertEvents(h.deps.rowStore, p.id, visits(200, 6, spread));
    const want = await computed(p, 'pages', '30d', 'raw');
    expect(await computed(p, 'pages', '30d', 'rollup')).toEqual(want);
    await h.deps.background!.settled();
    // Retention drops the stored part; a process that has not seen it yet looks for it, stores it again under the
    // same deduplication token (ClickHouse keeps nothing), and finds no marker.
    await h.deps.clickhouse.command({ query: 'ALTER TABLE pages_parts DELETE WHERE project_id = {id:String}', query_params: { id: p.id }, clickhouse_settings: { mutations_sync: '2' } });
    const fresh = { ...h.deps, storedParts: new StoredParts() };
    expect(await computed(p, 'pages', '30d', 'rollup', fresh)).toEqual(want);
    await h.deps.background!.settled();
    expect(await computed(p, 'pages', '30d', 'rollup', fresh)).toEqual(want);
    const rs = await h.deps.clickhouse.query({ query: 'SELECT count() AS n FROM pages_parts WHERE project_id = {id:String}', query_params: { id: p.id }, format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ n: '0' }]);
  });

  it('forgets a part when its time is up, and keeps a bounded number', () => {
    const known = new StoredParts({ maxEntries: 2 });
    known.found('a', true, 100);
    expect(known.stored('a', 99)).toBe(true);
    expect(known.stored('a', 100)).toBeUndefined();
    known.found('a', false, 200);
    expect(known.stored('a', 150)).toBe(false);
    known.found('b', true, 500);
    known.found('c', true, 500);
    expect([known.stored('a', 150), known.stored('b', 150), known.stored('c', 150)]).toEqual([undefined, true, true]);
  });

  it('tells the size of a part known stored, while it is known and when that was read', () => {
    const known = new StoredParts();
    known.found('sized', true, 100, { values: 42, counted: 420 });
    known.found('unsized', true, 100);
    known.found('missing', false, 100, { values: 0, counted: 0 });
    expect([known.sizeOf('sized', 99), known.sizeOf('unsized', 99), known.sizeOf('missing', 99), known.sizeOf('unknown', 99)]).toEqual([{ values: 42, counted: 420 }, undefined, undefined, undefined]);
    expect(known.sizeOf('sized', 100)).toBeUndefined();
  });
});

describe('closedDaysOf', () => {
  const params = (now: number, period: '30d' | '7d' | 'today' = '30d') => periodParams('p', resolvePeriod(period, 'UTC', now), { rollupEnd: Math.floor(now / DAY) * DAY + DAY });
  const iso = (days: { from: number; to: number } | null) => days && { from: new Date(days.from).toISOString(), to: new Date(days.to).toISOString() };

  it('ends at the last UTC midnight before the closed hours end, a minute after each hour starts', () => {
    const noon = Date.parse('2026-03-08T12:30:00Z');
    expect(iso(closedDaysOf(params(noon), noon))).toEqual({ from: '2026-02-07T00:00:00.000Z', to: '2026-03-08T00:00:00.000Z' });
    // Half a minute into the day, the hour before midnight is not closed yet: yesterday is not either.
    const justAfterMidnight = Date.parse('2026-03-09T00:00:30Z');
    expect(iso(closedDaysOf(params(justAfterMidnight), justAfterMidnight))?.to).toBe('2026-03-08T00:00:00.000Z');
    const minuteAfter = Date.parse('2026-03-09T00:01:00Z');
    expect(iso(closedDaysOf(params(minuteAfter), minuteAfter))?.to).toBe('2026-03-09T00:00:00.000Z');
  });

  it('holds no part of fewer than two days', () => {
    const noon = Date.parse('2026-03-08T12:30:00Z');
    expect(closedDaysOf(params(noon, 'today'), noon)).toBeNull();
    expect(closedDaysOf(params(noon, '7d'), noon)).not.toBeNull();
    expect(closedDaysOf({ projectId: 'p' }, noon)).toBeNull();
  });
});
