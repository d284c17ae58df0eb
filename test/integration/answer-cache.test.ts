import * as v from 'valibot';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { analysisEndpoints } from '../../src/analysis/routes/index.js';
import { createBatcher } from '../../src/ingest/batcher.js';
import { getProject, type Project } from '../../src/projects/store.js';
import { funnelStore, goalStore } from '../../src/goals/store.js';
import { findReport } from '../../src/reports/registry.js';
import { insertEvents, type GenEvent } from '../helpers/events-gen.js';
import { callJson, chTime, newProject, seededRandom } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';
import { TEST_DATA_VERSION_KEY } from '../helpers/harness.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
// Not on a whole second: answers at a whole second are never kept (see answer-cache.ts).
const START = Date.parse('2026-11-20T10:15:00.000Z') + 417;
const clock = fixedClock(START);
const ctx = useHarness(['alice'], { clock });

let site: { domain: string; id: string };
let project: Project;

const counts = () => ({ ...ctx.h.deps.answers!.counts });
const ask = async (path: string) => {
  const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${site.domain}${path}`, ctx.alice.readKey);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Record<string, unknown>;
};
const uncachedDeps = () => ({ ...ctx.h.deps, answers: undefined });
/** The report computed now without the cache, as the route would shape it. */
async function fresh(name: string, query: Record<string, string>) {
  const def = findReport(name)!;
  const answer = await def.run({ deps: uncachedDeps(), project, role: 'owner' }, v.parse(def.query, query) as never);
  return JSON.parse(JSON.stringify(answer));
}
async function freshBreakdown(query: Record<string, string>) {
  const e = analysisEndpoints.find((x) => x.name === 'breakdown')!;
  return JSON.parse(JSON.stringify(await e.run({ deps: uncachedDeps(), project }, v.parse(e.input, query))));
}

let visitor = 1;
const pageview = (ts: number, path = '/', extra: Partial<GenEvent> = {}): GenEvent => {
  visitor++;
  return {
    ts, kind: 'pageview', visitor, session: visitor, path, referrerSource: 'news.example', countryCode: 'DE', countryName: 'Germany', city: 'Berlin',
    device: 'Desktop', browser: 'Firefox', os: 'Linux', eventName: '', amountCents: 0, currency: '', durationMs: 0, ...extra,
  } as GenEvent;
};
const write = (events: GenEvent[]) => insertEvents(ctx.h.deps.rowStore, site.id, events);

/** A random walk computes each of its ~60 answers twice: on a slow host under the whole suite one took over 30 s. */
const WALK_TIMEOUT_MS = 120_000;

/**
 * Random writes (mostly live rows, now and then one stamped a little ahead, as an import), clock
 * moves and questions, each answer compared with an uncached computation; answers the answers and
 * shared parts reused on the way.
 */
async function randomWalk(seed: number, steps: number, questions: [string, Record<string, string>][], rates = { write: 0.2, move: 0.2 }) {
  const r = seededRandom(seed);
  // The rows' browser and source come from a stream of their own, so `r` draws the same walk for a seed.
  const looks = seededRandom(seed + 1);
  const cache = ctx.h.deps.answers!;
  const before = { answers: cache.counts.reused, parts: cache.partCounts.reused };
  for (let step = 0; step < steps; step++) {
    const roll = r.next();
    if (roll < rates.write) {
      const ahead = r.next() < 0.2 ? r.int(1, 40) * MINUTE : -r.int(1, 600) * 1000;
      const extra = { kind: r.next() < 0.2 ? 'custom' : 'pageview', eventName: 'Signup', browser: ['Firefox', 'Chrome'][looks.int(0, 1)], referrerSource: ['news.example', '(direct)'][looks.int(0, 1)] };
      await write([pageview(clock.now() + ahead, `/r${r.int(0, 4)}`, extra as Partial<GenEvent>)]);
    } else if (roll < rates.write + rates.move) {
      clock.advance(r.int(1, 25 * MINUTE));
    }
    if (r.next() < 0.2) {
      const query = { dimension: ['page', 'source', 'country', 'channel'][r.int(0, 3)]!, period: ['7d', '30d'][r.int(0, 1)]! };
      expect(await ask(`/breakdown?${new URLSearchParams(query)}`)).toEqual(await freshBreakdown(query));
    } else {
      const [name, query] = questions[r.int(0, questions.length - 1)]!;
      expect(await ask(`/${name}?${new URLSearchParams(query)}`), `${name} ${JSON.stringify(query)}`).toEqual(await fresh(name, query));
    }
  }
  return { answers: cache.counts.reused - before.answers, parts: cache.partCounts.reused - before.parts };
}

beforeAll(async () => {
  site = await newProject(ctx.h, ctx.alice);
  project = (await getProject(ctx.h.deps.redis, site.id))!;
  await write(Array.from({ length: 40 }, (_, i) => pageview(START - (i % 20) * DAY - (i + 1) * MINUTE, `/p${i % 5}`)));
});

describe('answer cache', () => {
  it('reuses an answer while nothing is written, with only its `to` moved to the new now', async () => {
    const first = await ask('/stats?period=30d');
    const before = counts();
    clock.advance(1234);
    const second = await ask('/stats?period=30d');
    expect(counts().reused).toBe(before.reused + 1);
    expect(second.to).toBe(new Date(clock.now()).toISOString());
    expect(second).toEqual(await fresh('stats', { period: '30d' }));
    expect({ ...second, to: first.to }).toEqual(first);
  });

  it('a write moves the data version: the next answer holds the new row', async () => {
    const before = (await ask('/stats?period=30d')) as { pageviews: number };
    const c = counts();
    await write([pageview(clock.now() - 5000, '/new')]);
    const after = (await ask('/stats?period=30d')) as { pageviews: number };
    expect(counts().computed).toBe(c.computed + 1);
    expect(after.pageviews).toBe(before.pageviews + 1);
  });

  it('a batch flushed by the batcher moves the version of its projects only', async () => {
    const other = await newProject(ctx.h, ctx.alice);
    const versionOf = async (id: string) => (await ctx.h.deps.redis.hget<string>(TEST_DATA_VERSION_KEY, id)) ?? null;
    await ctx.h.deps.answers!.versions.current(other.id);
    const [mine, theirs] = [await versionOf(site.id), await versionOf(other.id)];
    const batcher = createBatcher(ctx.h.deps.rowStore, { flushIntervalMs: 60_000 });
    await batcher.write('events', [{ project_id: site.id, ts: chTime(clock.now() - 2000), kind: 'pageview', visitor_id: 7, session_id: 7, path: '/batched' }]);
    await batcher.close();
    expect(await versionOf(site.id)).not.toBe(mine);
    expect(await versionOf(other.id)).toBe(theirs);
    const pages = (await ask('/pages?period=today')) as { data: { path: string }[] };
    expect(pages.data.map((p) => p.path)).toContain('/batched');
  });

  it('is never reused across a row stamped after the answer (an import with future timestamps)', async () => {
    await write([pageview(clock.now() + 10 * MINUTE, '/future')]);
    const a = (await ask('/pages?period=today')) as { data: { path: string }[] };
    expect(a.data.map((p) => p.path)).not.toContain('/future');
    const c = counts();
    clock.advance(3 * MINUTE);
    await ask('/pages?period=today');
    expect(counts().reused).toBe(c.reused);
    clock.advance(8 * MINUTE);
    const b = await ask('/pages?period=today');
    expect((b as { data: { path: string }[] }).data.map((p) => p.path)).toContain('/future');
    expect(b).toEqual(await fresh('pages', { period: 'today' }));
  });

  it('goals and funnels are reused while their definitions and data stay, computed again when a definition changes', async () => {
    const redis = ctx.h.deps.redis;
    const signup = await goalStore.create(redis, site.id, { name: 'Signup', type: 'event', value: 'Signup', target: null }, clock.now(), 10);
    const funnel = (await funnelStore.create(redis, site.id, { name: 'Browse', steps: [{ type: 'pageview', value: '/p*' }, { type: 'pageview', value: '/p1' }] }, clock.now(), 10))!;
    await write([pageview(clock.now() - 5000, '/p0', { kind: 'custom', eventName: 'Signup' } as Partial<GenEvent>)]);
    const freshGoals = () => fresh('goals', { period: '7d' });
    const freshFunnel = async () => {
      const def = findReport('funnel')!;
      const input = { ...(v.parse(def.query, { period: '7d' }) as object), id: funnel.id };
      return JSON.parse(JSON.stringify(await def.run({ deps: uncachedDeps(), project, role: 'owner' }, input as never)));
    };
    const paths = ['/goals?period=7d', `/funnels/${funnel.id}?period=7d`];
    const expected = async () => [await freshGoals(), await freshFunnel()];
    expect(await Promise.all(paths.map(ask))).toEqual(await expected());
    clock.advance(321);
    let c = counts();
    expect(await Promise.all(paths.map(ask))).toEqual(await expected());
    expect(counts().reused).toBe(c.reused + 2);

    // A goal added (no row written, no data version moved): the goals are computed again and list it.
    await goalStore.create(redis, site.id, { name: 'Pricing', type: 'pageview', value: '/p1', target: 5 }, clock.now(), 10);
    clock.advance(321);
    c = counts();
    const [goals] = (await Promise.all(paths.map(ask))) as [{ goals: { name: string }[] }, unknown];
    expect(counts().computed).toBe(c.computed + 1);
    expect(goals.goals.map((g) => g.name)).toEqual(['Signup', 'Pricing']);
    expect(goals).toEqual(await freshGoals());

    // The funnel deleted: 404, not the kept answer.
    await funnelStore.remove(redis, site.id, funnel.id);
    await goalStore.remove(redis, site.id, signup!.id);
    const gone = await callJson(ctx.h, 'GET', `/api/v1/projects/${site.domain}/funnels/${funnel.id}?period=7d`, ctx.alice.readKey);
    expect(gone.status).toBe(404);
    expect(((await ask('/goals?period=7d')) as { goals: { name: string }[] }).goals.map((g) => g.name)).toEqual(['Pricing']);
  });

  it('a compared end that reaches a stored row exactly counts it: computed again', async () => {
    clock.set(Math.ceil(clock.now() / (15 * MINUTE)) * 15 * MINUTE + MINUTE + 417);
    const path = '/stats?period=7d&compare=previous_period';
    const end = Date.parse(((await ask(path)) as { comparison: { to: string } }).comparison.to);
    await write([pageview(end + 3 * MINUTE, '/at-the-end')]);
    clock.advance(MINUTE);
    const before = (await ask(path)) as { comparison: { pageviews: number } };
    clock.advance(2 * MINUTE);
    const c = counts();
    const reached = (await ask(path)) as { comparison: { pageviews: number } };
    expect(counts().computed).toBe(c.computed + 1);
    expect(reached).toEqual(await fresh('stats', { period: '7d', compare: 'previous_period' }));
    expect(reached.comparison.pageviews).toBe(before.comparison.pageviews + 1);
  });

  it('24h with a comparison is reused until the compared start passes a stored row, with its `from` moved', async () => {
    clock.set(Math.ceil(clock.now() / (15 * MINUTE)) * 15 * MINUTE + MINUTE + 417);
    const comparedStarts = { previous_period: clock.now() - 2 * DAY, year_over_year: clock.now() - DAY - 365 * DAY };
    // Pageviews at the compared start the first move reaches (still counted then) and 3 minutes after each compared start.
    await write(Object.values(comparedStarts).flatMap((start) => [2 * MINUTE, 3 * MINUTE].map((t) => pageview(start + t, '/compared'))));
    const questions: [string, Record<string, string>][] = [['stats', { period: '24h', compare: 'previous_period' }], ['timeseries', { period: '24h', compare: 'year_over_year' }]];
    type Compared = { comparison: { from: string; pageviews?: number } };
    const askAll = async () => {
      const answers = (await Promise.all(questions.map(([name, query]) => ask(`/${name}?${new URLSearchParams(query)}`)))) as (Record<string, unknown> & Compared)[];
      expect(answers).toEqual(await Promise.all(questions.map(([name, query]) => fresh(name, query))));
      return answers;
    };
    const first = await askAll();
    clock.advance(2 * MINUTE);
    let c = counts();
    const moved = await askAll();
    expect(counts().reused).toBe(c.reused + 2);
    for (const [i, answer] of moved.entries()) expect(Date.parse(answer.comparison.from) - Date.parse(first[i]!.comparison.from)).toBe(2 * MINUTE);
    // The compared starts pass their pageviews: computed again, and they are out.
    clock.advance(2 * MINUTE);
    c = counts();
    const passed = await askAll();
    expect(counts().computed).toBe(c.computed + 2);
    expect(passed[0]!.comparison.pageviews).toBe(moved[0]!.comparison.pageviews! - 2);
  });

  it('24h is reused until its start passes a stored row, with `from` and `to` moved', async () => {
    // One minute into a 15-minute grid cell, so every ask below falls in the same cell.
    clock.set(Math.ceil(clock.now() / (15 * MINUTE)) * 15 * MINUTE + MINUTE + 417);
    const start = clock.now() - DAY;
    // Pageviews at the start the first move reaches (still counted then), 3 and 6 minutes after the range's start, and rows inside the range.
    const rows = [2 * MINUTE, 3 * MINUTE, 6 * MINUTE].map((t) => pageview(start + t, '/edge'));
    await write([...rows, pageview(start + 2 * 3_600_000, '/inside'), pageview(clock.now() - MINUTE, '/inside')]);
    const questions: [string, Record<string, string>][] = [
      ['stats', { period: '24h' }], ['pages', { period: '24h' }], ['timeseries', { period: '24h' }], ['referrers', { period: '24h' }], ['devices', { period: '24h' }],
    ];
    const path = ([name, query]: [string, Record<string, string>]) => `/${name}?${new URLSearchParams(query)}`;
    const expected = () => Promise.all(questions.map(([name, query]) => fresh(name, query)));
    /** Moves the clock by `ms` and asks every question: the answers (checked against uncached ones) and how many were reused. */
    const askAllAfter = async (ms: number) => {
      clock.advance(ms);
      const before = counts().reused;
      const answers = await Promise.all(questions.map((q) => ask(path(q))));
      expect(answers).toEqual(await expected());
      return { answers, reused: counts().reused - before };
    };
    const pageviews = (answers: Record<string, unknown>[]) => (answers[0] as { pageviews: number }).pageviews;
    const first = await askAllAfter(0);

    const moved = await askAllAfter(2 * MINUTE);
    expect(moved.reused).toBe(questions.length);
    for (const [i, answer] of moved.answers.entries()) {
      expect(answer.from, questions[i]![0]).toBe(new Date(clock.now() - DAY).toISOString());
      expect(Date.parse(String(answer.from)) - Date.parse(String(first.answers[i]!.from))).toBe(2 * MINUTE);
    }
    // The start passes the first two pageviews: every answer computed again, and they are out.
    const passed = await askAllAfter(2 * MINUTE);
    expect(passed.reused).toBe(0);
    expect(pageviews(passed.answers)).toBe(pageviews(moved.answers) - 2);
    // Reused again until the start passes the third.
    expect((await askAllAfter(MINUTE)).reused).toBe(questions.length);
    const third = await askAllAfter(2 * MINUTE);
    expect(third.reused).toBe(0);
    expect(pageviews(third.answers)).toBe(pageviews(passed.answers) - 1);
  });

  it('24h is computed every time where its start cell holds more than 10,000 events', async () => {
    clock.set(Math.ceil(clock.now() / (15 * MINUTE)) * 15 * MINUTE + MINUTE + 417);
    const busy = await newProject(ctx.h, ctx.alice);
    // 10,001 events in the 15-minute cell of the start, all in its last minute (no ask below passes one).
    const cellEnd = Math.ceil((clock.now() - DAY) / (15 * MINUTE)) * 15 * MINUTE;
    await insertEvents(ctx.h.deps.rowStore, busy.id, Array.from({ length: 10_001 }, (_, i) => pageview(cellEnd - MINUTE + i, '/busy')));
    const askBusy = () => callJson(ctx.h, 'GET', `/api/v1/projects/${busy.domain}/stats?period=24h`, ctx.alice.readKey);
    await askBusy();
    clock.advance(1000 + 7);
    const c = counts();
    expect((await askBusy()).status).toBe(200);
    expect(counts().computed).toBe(c.computed + 1);
  });

  it('a comparison is reused until its compared end passes a stored row, with both `to` stamps moved', async () => {
    // One minute into a 15-minute grid cell, so every ask below falls in the same cell.
    clock.set(Math.ceil(clock.now() / (15 * MINUTE)) * 15 * MINUTE + MINUTE + 417);
    const paths = ['/stats?period=7d&compare=previous_period', '/breakdown?dimension=page&period=30d&compare=year_over_year'];
    type Compared = { comparison: { to: string; pageviews?: number }; data?: { page: string; comparison: { visitors: number } }[] };
    const askCompared = async (path: string) => (await ask(path)) as Record<string, unknown> & Compared;
    const ends = await Promise.all(paths.map(async (path) => Date.parse((await askCompared(path)).comparison.to)));
    // A row 5 minutes after each compared end, on a page the breakdown shows (the write moves the data version: the answers below start afresh).
    await write(ends.map((end) => pageview(end + 5 * MINUTE, '/p1')));
    const expected = async () => [await fresh('stats', { period: '7d', compare: 'previous_period' }), await freshBreakdown({ dimension: 'page', period: '30d', compare: 'year_over_year' })];
    const first = await Promise.all(paths.map(askCompared));
    expect(first).toEqual(await expected());

    clock.advance(2 * MINUTE);
    let c = counts();
    const moved = await Promise.all(paths.map(askCompared));
    expect(counts().reused).toBe(c.reused + 2);
    expect(moved).toEqual(await expected());
    for (const [i, answer] of moved.entries()) {
      expect(answer.to).toBe(new Date(clock.now()).toISOString());
      expect(Date.parse(answer.comparison.to) - Date.parse(first[i]!.comparison.to)).toBe(2 * MINUTE);
    }

    // The compared ends pass the rows: computed again, and the rows are in.
    clock.advance(4 * MINUTE);
    c = counts();
    const passed = await Promise.all(paths.map(askCompared));
    expect(counts().computed).toBe(c.computed + 2);
    expect(passed).toEqual(await expected());
    expect(passed[0]!.comparison.pageviews).toBe(moved[0]!.comparison.pageviews! + 1);
    const p1 = (answer: Compared) => answer.data!.find((r) => r.page === '/p1')!.comparison.visitors;
    expect(p1(passed[1]!)).toBe(p1(moved[1]!) + 1);
  });

  it('identical questions asked at once are computed once', async () => {
    await write([pageview(clock.now() - 1000, '/burst')]);
    const c = counts();
    const answers = await Promise.all(Array.from({ length: 6 }, () => ask('/countries?period=7d')));
    expect(counts().computed).toBe(c.computed + 1);
    expect(counts().reused).toBe(c.reused + 5);
    for (const a of answers) expect(a).toEqual(answers[0]);
  });

  it("a dashboard's requests compute their shared parts once: the device/browser/OS lists, the visits by source, stats' and the series' rollup read", async () => {
    await write([pageview(clock.now() - 2000, '/parts', { browser: 'Chrome', referrerSource: 'search.example' } as Partial<GenEvent>)]);
    const parts = () => ({ ...ctx.h.deps.answers!.partCounts });
    const before = parts();
    const paths = ['/devices?period=30d', '/browsers?period=30d&limit=1', '/os?period=30d', '/stats?period=30d', '/referrers?period=30d&limit=2', '/timeseries?period=30d'];
    const answers = await Promise.all(paths.map(ask));
    // One tech-lists part, one visits-by-source part and one stats-and-series read, each computed once and reused by its other askers.
    expect(parts().computed).toBe(before.computed + 3);
    expect(parts().reused).toBe(before.reused + 4);
    const expected = await Promise.all(paths.map((path) => {
      const [name, query] = path.slice(1).split('?') as [string, string];
      return fresh(name, Object.fromEntries(new URLSearchParams(query)));
    }));
    expect(answers).toEqual(expected);
    expect((answers[1] as { data: { name: string }[] }).data.map((b) => b.name)).toEqual(['Firefox']);
    expect((answers[4] as { data: { referrer: string }[] }).data.map((r) => r.referrer)).toEqual(['news.example', 'search.example']);
  });

  it('a part is shared only inside an answer the cache computes (a direct run resolves its range at its own clock read)', async () => {
    const parts = () => ({ ...ctx.h.deps.answers!.partCounts });
    const before = parts();
    const def = findReport('referrers')!;
    const direct = await def.run({ deps: { ...ctx.h.deps, answers: undefined }, project, role: 'owner' }, v.parse(def.query, { period: '30d' }) as never);
    const unwrapped = (await import('../../src/reports/defs/referrers.js')).referrersReport;
    const own = await unwrapped.run({ deps: ctx.h.deps, project, role: 'owner' }, v.parse(def.query, { period: '30d' }) as never);
    expect(parts()).toEqual(before);
    expect(own).toEqual(direct);
  });

  it('a version lost from Redis is never matched: the answer is computed again', async () => {
    await ask('/devices?period=30d');
    await ctx.h.deps.redis.hdel(TEST_DATA_VERSION_KEY, site.id);
    const c = counts();
    clock.advance(777);
    await ask('/devices?period=30d');
    expect(counts().computed).toBe(c.computed + 1);
  });

  it('a range that ended before today counts no row stored after its end (+5:30: it ends inside a UTC day)', async () => {
    const kolkata = await newProject(ctx.h, ctx.alice, 'Asia/Kolkata');
    const kolkataProject = (await getProject(ctx.h.deps.redis, kolkata.id))!;
    // 2026-11-18 ends at 18:30 UTC there; rows from then to today are stored.
    const end = Date.parse('2026-11-18T18:30:00Z');
    await insertEvents(ctx.h.deps.rowStore, kolkata.id, [end - 3_600_000, end + 60_000, end + 3 * 3_600_000, clock.now() - DAY].map((ts) => pageview(ts, '/k')));
    const query = { period: 'custom', from: '2026-11-10', to: '2026-11-18' };
    for (const name of ['devices', 'stats', 'pages', 'events']) {
      const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${kolkata.domain}/${name}?${new URLSearchParams(query)}`, ctx.alice.readKey);
      const def = findReport(name)!;
      const expected = await def.run({ deps: uncachedDeps(), project: kolkataProject, role: 'owner' }, v.parse(def.query, query) as never);
      expect(res.body, name).toEqual(JSON.parse(JSON.stringify(expected)));
    }
    const stats = (await callJson(ctx.h, 'GET', `/api/v1/projects/${kolkata.domain}/stats?${new URLSearchParams(query)}`, ctx.alice.readKey)).body as { pageviews: number };
    expect(stats.pageviews).toBe(1);
  });

  it('answers the same as an uncached computation through random writes, reads and clock moves', async () => {
    const reused = await randomWalk(20261126, 60, [
      ['stats', { period: '30d' }], ['stats', { period: 'today' }], ['timeseries', { period: '7d' }], ['timeseries', { period: 'today' }],
      ['pages', { period: '90d' }], ['referrers', { period: '30d' }], ['countries', { period: 'all' }], ['browsers', { period: '12m' }],
      ['events', { period: '7d' }], ['visitors', { period: '30d' }], ['performance', { period: '30d' }],
      ['stats', { period: 'custom', from: '2026-11-01', to: '2026-12-31' }], ['pages', { period: '30d', filters: 'country==DE' }],
      // Ranges that ended before today: rows after their end are stored, and must not be counted.
      ['events', { period: 'custom', from: '2026-11-01', to: '2026-11-15' }], ['devices', { period: 'custom', from: '2026-10-25', to: '2026-11-18' }],
    ]);
    // The walk must have reused answers, or it tested nothing of the cache.
    expect(reused.answers).toBeGreaterThan(5);
  }, WALK_TIMEOUT_MS);

  it('shared parts answer the same as an uncached computation through random writes, reads and clock moves', async () => {
    const reused = await randomWalk(20261127, 60, [
      ['devices', { period: '30d' }], ['browsers', { period: '30d' }], ['os', { period: '30d', limit: '2' }], ['stats', { period: '30d' }],
      ['referrers', { period: '30d' }], ['browsers', { period: 'custom', from: '2026-10-25', to: '2026-11-18' }],
      ['devices', { period: 'custom', from: '2026-10-25', to: '2026-11-18' }], ['referrers', { period: '7d' }], ['stats', { period: '7d' }],
      // Comparisons: the request's own range shares its part, the compared range never does.
      ['stats', { period: '7d', compare: 'previous_period' }], ['referrers', { period: '30d', compare: 'year_over_year' }],
      ['stats', { period: '30d', filters: 'source==news.example' }],
      ['timeseries', { period: '30d' }], ['timeseries', { period: '7d' }], ['timeseries', { period: '30d', interval: 'month' }],
      ['timeseries', { period: '7d', compare: 'previous_period' }], ['timeseries', { period: 'custom', from: '2026-10-25', to: '2026-11-18' }],
      ['stats', { period: 'custom', from: '2026-10-25', to: '2026-11-18' }],
    ], { write: 0.1, move: 0.1 });
    expect(reused.parts).toBeGreaterThan(2);
  }, WALK_TIMEOUT_MS);

  it('comparisons answer the same as an uncached computation while their compared ends pass stored rows', async () => {
    // Rows every 7 minutes over the next 3 hours' compared instants (a week, 30 days, a year back), which the compared ends pass as the clock moves.
    const ahead = Array.from({ length: 26 }, (_, j) => (j + 1) * 7 * MINUTE);
    await write([7 * DAY, 30 * DAY, 365 * DAY].flatMap((back) => ahead.map((t) => pageview(clock.now() - back + t, `/p${t % 5}`))));
    const reused = await randomWalk(20261128, 60, [
      ['stats', { period: '7d', compare: 'previous_period' }], ['timeseries', { period: '30d', compare: 'previous_period' }],
      ['pages', { period: '30d', compare: 'year_over_year' }], ['countries', { period: '7d', compare: 'previous_period', filters: 'country==DE' }],
    ], { write: 0.1, move: 0.3 });
    expect(reused.answers).toBeGreaterThan(3);
  }, WALK_TIMEOUT_MS);

  it('24h answers the same as an uncached computation while its start and its compared start pass stored rows', async () => {
    // Rows every 40 minutes over the next 6 hours' starts of `24h` (a day back) and of its previous period (two days back).
    const ahead = Array.from({ length: 9 }, (_, j) => (j + 1) * 40 * MINUTE);
    await write([DAY, 2 * DAY].flatMap((back) => ahead.map((t) => pageview(clock.now() - back + t, `/p${t % 5}`))));
    const reused = await randomWalk(20261129, 60, [
      ['stats', { period: '24h' }], ['timeseries', { period: '24h' }], ['pages', { period: '24h', filters: 'country==DE' }],
      ['referrers', { period: '24h' }], ['stats', { period: '24h', compare: 'previous_period' }], ['pages', { period: '24h', compare: 'previous_period' }],
    ], { write: 0.1, move: 0.3 });
    expect(reused.answers).toBeGreaterThan(3);
  }, WALK_TIMEOUT_MS);
});
