import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { RANGE_PERIODS, REPORT_PERIODS } from '../../src/reports/periods.js';
import { findProjectIdByDomain, getProject } from '../../src/projects/store.js';
import type { PlannedReport } from '../../src/reports/planned.js';
import { planSource, SOURCES } from '../../src/reports/planner.js';
import { findReport, reports } from '../../src/reports/registry.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const NOW = Date.parse('2026-03-08T18:00:00Z'); // US spring-forward day, afternoon in New York
const clock = fixedClock(NOW);
let h: Harness;
let alice: TestUser;
let bob: TestUser;
beforeAll(async () => {
  h = await createHarness({ clock });
  [alice, bob] = await Promise.all([h.user('alice'), h.user('bob')]);
});
afterAll(closeHarness);

const HOUR = 3_600_000;
const CORE = ['stats', 'timeseries', 'pages', 'referrers', 'countries', 'cities', 'devices', 'browsers', 'os', 'events'];
const LIMITED = ['pages', 'referrers', 'countries', 'cities', 'browsers', 'os', 'events'];

/** A fresh project in `timeZone` holding `events`; returns its domain. */
async function projectWith(events: GenEvent[], timeZone = 'UTC', owner = alice): Promise<string> {
  const domain = h.domain('rules');
  const res = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Rules', domain, timeZone } });
  expect(res.status).toBe(201);
  await insertEvents(h.deps.rowStore, ((await res.json()) as { id: string }).id, events);
  return domain;
}

async function get(domain: string, report: string, query = '', token = alice.readKey) {
  const res = await h.call('GET', `/api/v1/projects/${domain}/${report}${query ? `?${query}` : ''}`, { token });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const at = (hoursAgo: number) => NOW - hoursAgo * HOUR;

describe('ranking, ties and limits', () => {
  it('ranks by the metric, breaks ties by name ascending, and applies limit', async () => {
    const events = [
      ...[1, 2, 3].map((v) => makeEvent({ ts: at(1), path: '/b', visitor: v })),
      ...[1, 2, 3].map((v) => makeEvent({ ts: at(2), path: '/a', visitor: v })),
      ...[1, 1, 1, 1].map((v) => makeEvent({ ts: at(3), path: '/c', visitor: v })),
      makeEvent({ ts: at(4), path: '/d', visitor: 9, browser: 'Firefox' }),
      makeEvent({ ts: at(4), path: '/d', visitor: 8, browser: 'Brave' }),
    ];
    const domain = await projectWith(events);
    const pages = await get(domain, 'pages', 'limit=3');
    expect(pages.body.data).toEqual([
      { path: '/c', pageviews: 4, visitors: 1 },
      { path: '/a', pageviews: 3, visitors: 3 },
      { path: '/b', pageviews: 3, visitors: 3 },
    ]);
    // Browsers rank by visitors: Chrome (1, 2, 3) then the 1-visitor tie Brave < Firefox.
    const browsers = await get(domain, 'browsers', 'limit=2');
    expect(browsers.body.data).toEqual([{ name: 'Chrome', visitors: 3 }, { name: 'Brave', visitors: 1 }]);
  });

  it('defaults to 10 rows (20 for events) and accepts 1 and 100', async () => {
    const events = Array.from({ length: 25 }, (_, i) => [
      makeEvent({ ts: at(1), path: `/p${String(i).padStart(2, '0')}` }),
      makeEvent({ ts: at(1), kind: 'custom', eventName: `e${String(i).padStart(2, '0')}` }),
    ]).flat();
    const domain = await projectWith(events);
    expect((await get(domain, 'pages')).body.data).toHaveLength(10);
    expect((await get(domain, 'events')).body.data).toHaveLength(20);
    expect((await get(domain, 'pages', 'limit=1')).body.data).toEqual([{ path: '/p00', pageviews: 1, visitors: 1 }]);
    expect((await get(domain, 'pages', 'limit=100')).body.data).toHaveLength(25);
  });

  it('cities list known geo only, ranked by visitors; countries leave out unknown geo', async () => {
    const domain = await projectWith([
      makeEvent({ ts: at(1), visitor: 1, city: '' }),
      makeEvent({ ts: at(1), visitor: 2, city: '', countryCode: '', countryName: '' }),
      makeEvent({ ts: at(1), visitor: 3, city: 'Berlin', countryCode: 'DE', countryName: 'Germany' }),
      makeEvent({ ts: at(1), visitor: 3, city: 'Berlin', countryCode: 'DE', countryName: 'Germany' }),
      makeEvent({ ts: at(1), visitor: 4, city: 'Munich', countryCode: 'DE', countryName: 'Germany' }),
      makeEvent({ ts: at(1), visitor: 5, city: 'Munich', countryCode: 'DE', countryName: 'Germany' }),
    ]);
    expect((await get(domain, 'cities')).body.data).toEqual([
      { city: 'Munich', country: 'Germany', country_code: 'DE', visitors: 2, pageviews: 2 },
      { city: 'Berlin', country: 'Germany', country_code: 'DE', visitors: 1, pageviews: 2 },
    ]);
    expect((await get(domain, 'countries')).body.data).toEqual([
      { country: 'Germany', country_code: 'DE', pageviews: 4, visitors: 3 },
      { country: 'United States', country_code: 'US', pageviews: 1, visitors: 1 },
    ]);
  });
});

describe('shapes and special values', () => {
  it('reports (direct), Unknown tech, and null duration without leave events', async () => {
    const domain = await projectWith([
      makeEvent({ ts: at(1), referrerSource: '(direct)', device: '', browser: '', os: '' }),
      makeEvent({ ts: at(1), referrerSource: 'google.com', visitor: 2 }),
    ]);
    expect((await get(domain, 'referrers')).body.data).toEqual([
      { referrer: '(direct)', pageviews: 1, visitors: 1 },
      { referrer: 'google.com', pageviews: 1, visitors: 1 },
    ]);
    const devices = (await get(domain, 'devices')).body;
    expect(devices.devices).toEqual([{ name: 'Desktop', visitors: 1 }, { name: 'Unknown', visitors: 1 }]);
    expect(devices.os).toEqual([{ name: 'Unknown', visitors: 1 }, { name: 'Windows', visitors: 1 }]);
    const stats = (await get(domain, 'stats')).body;
    expect(stats).toEqual({
      period: '30d', from: expect.any(String), to: expect.any(String),
      pageviews: 2, visitors: 2, sessions: 2, avgDurationSeconds: null, bounceRate: 1, viewsPerVisit: 1,
    });
  });

  it('averages visit durations in seconds: the leave durations of a session summed, over the sessions with a leave', async () => {
    const domain = await projectWith([
      // One visit of three pages (two leaves, 75.5 s in all), one of one page (20 s): (75.5 + 20) / 2.
      makeEvent({ ts: at(2), session: 10 }),
      makeEvent({ ts: at(2), kind: 'leave', durationMs: 30_000, session: 10 }),
      makeEvent({ ts: at(1.5), session: 10 }),
      makeEvent({ ts: at(1), kind: 'leave', durationMs: 45_500, session: 10 }),
      makeEvent({ ts: at(1), session: 10 }),
      makeEvent({ ts: at(1), kind: 'leave', durationMs: 20_000, visitor: 2, session: 20 }),
      makeEvent({ ts: at(1), visitor: 3, session: 30 }), // a visit without a leave event is not averaged in
      makeEvent({ ts: at(24 * 40), kind: 'leave', durationMs: 999_000, visitor: 4, session: 40 }), // outside 30d
    ]);
    const project = (await getProject(h.deps.redis, (await findProjectIdByDomain(h.deps.redis, domain))!))!;
    for (const source of SOURCES) {
      const stats = await (findReport('stats') as PlannedReport).compute({ deps: h.deps, project, role: 'owner' }, { period: '30d' }, source);
      expect(stats, source).toMatchObject({ pageviews: 4, visitors: 2, sessions: 2, avgDurationSeconds: 47.75 });
    }
    expect((await get(domain, 'stats')).body).toMatchObject({ avgDurationSeconds: 47.75 });
    // The export's overview and the stats CSV carry the same number.
    const csv = await (await h.call('GET', `/api/v1/projects/${domain}/stats`, { token: alice.readKey, headers: { Accept: 'text/csv' } })).text();
    expect(csv).toContain('avg_duration_seconds,47.75');
  });

  it('events: amounts per single currency, null on mixed currencies or none, pct sums to 1', async () => {
    const tx = (name: string, amountCents: number, currency: string, visitor = 1) =>
      makeEvent({ ts: at(1), kind: 'transaction', eventName: name, amountCents, currency, visitor });
    const domain = await projectWith([
      tx('buy', 1000, 'USD'), tx('buy', 250, 'USD', 2), makeEvent({ ts: at(1), kind: 'custom', eventName: 'buy', visitor: 3 }),
      tx('mixed', 100, 'USD'), tx('mixed', 200, 'EUR'),
      makeEvent({ ts: at(1), kind: 'custom', eventName: 'signup' }),
    ]);
    const { data } = (await get(domain, 'events')).body;
    expect(data).toEqual([
      { name: 'buy', people: 3, events: 3, pct: 0.5, amountCents: 1250, currency: 'USD', transactions: 2 },
      { name: 'mixed', people: 1, events: 2, pct: 2 / 6, amountCents: null, currency: null, transactions: 2 },
      { name: 'signup', people: 1, events: 1, pct: 1 / 6, amountCents: null, currency: null, transactions: 0 },
    ]);
    expect(data.reduce((s: number, r: { pct: number }) => s + r.pct, 0)).toBeCloseTo(1, 12);
    // With a limit, pct is the share of the returned rows.
    const top = (await get(domain, 'events', 'limit=2')).body.data;
    expect(top.map((r: { pct: number }) => r.pct)).toEqual([3 / 5, 2 / 5]);
  });

  it('every answer carries period, from and to', async () => {
    const domain = await projectWith([], 'Asia/Kolkata');
    for (const name of CORE) {
      const { status, body } = await get(domain, name, 'period=7d');
      expect(status, name).toBe(200);
      // 2026-03-08 18:00Z is 23:30 in Kolkata: 7 days from local midnight of the 2nd, ending now.
      expect({ period: body.period, from: body.from, to: body.to }, name).toEqual({
        period: '7d', from: '2026-03-01T18:30:00.000Z', to: '2026-03-08T18:00:00.000Z',
      });
    }
  });
});

describe('period edges on raw events', () => {
  it('counts events on the UTC date of `to` when the zone is not UTC, up to now and not after (both sources)', async () => {
    // St_Johns "today" on 2026-06-14 ends at 02:30Z on the 15th; now is its last millisecond. The
    // only rows sit on that UTC date: at now (counted) and 1 ms later, in the future (not counted).
    const end = Date.parse('2026-06-15T02:30:00Z');
    clock.set(end - 1);
    try {
      const domain = await projectWith([
        makeEvent({ ts: end - 1, kind: 'transaction', eventName: 'upgrade', amountCents: 5, currency: 'USD' }),
        makeEvent({ ts: end - 1 }),
        makeEvent({ ts: end, kind: 'custom', eventName: 'signup' }),
        makeEvent({ ts: end, visitor: 2 }),
      ], 'America/St_Johns');
      const project = (await getProject(h.deps.redis, (await findProjectIdByDomain(h.deps.redis, domain))!))!;
      for (const source of SOURCES) {
        const ctx = { deps: h.deps, project, role: 'owner' as const };
        const stats = await (findReport('stats') as PlannedReport).compute(ctx, { period: 'today' }, source);
        expect(stats, source).toMatchObject({ to: '2026-06-15T02:29:59.999Z', pageviews: 1, visitors: 1 });
        const events = await (findReport('events') as PlannedReport).compute(ctx, { period: 'today', limit: 20 }, source);
        expect((events as { data: unknown[] }).data, source).toEqual([
          { name: 'upgrade', people: 1, events: 1, pct: 1, amountCents: 5, currency: 'USD', transactions: 1 },
        ]);
      }
    } finally {
      clock.set(NOW);
    }
  });

  it('periods end now: no bucket after today, no event after now, this quarter hour counted exactly', async () => {
    // 12:07:30Z on the 15th: this_month and 12m end today, and the current quarter hour
    // (12:00–12:07:30) is not in any rollup bucket yet that the period may read whole.
    const now = Date.parse('2026-07-15T12:07:30Z');
    clock.set(now);
    try {
      const domain = await projectWith([
        makeEvent({ ts: now - 1 }), makeEvent({ ts: now, visitor: 2 }), makeEvent({ ts: now + 1, visitor: 3 }),
        makeEvent({ ts: Date.parse('2026-07-15T12:10:00Z'), visitor: 4 }), makeEvent({ ts: Date.parse('2026-07-20T08:00:00Z'), visitor: 5 }),
        makeEvent({ ts: Date.parse('2026-07-15T11:59:59.999Z'), visitor: 6 }),
      ]);
      const project = (await getProject(h.deps.redis, (await findProjectIdByDomain(h.deps.redis, domain))!))!;
      const ctx = { deps: h.deps, project, role: 'owner' as const };
      for (const period of ['this_month', '12m', '7d', 'today', '24h'] as const) {
        for (const source of SOURCES) {
          const stats = await (findReport('stats') as PlannedReport).compute(ctx, { period }, source);
          expect(stats, `${period} ${source}`).toMatchObject({ to: '2026-07-15T12:07:30.000Z', pageviews: 3, visitors: 3 });
          const series = (await (findReport('timeseries') as PlannedReport).compute(ctx, { period }, source)) as { data: { date: string; pageviews: number }[] };
          const last = series.data.at(-1)!;
          expect(last.date <= '2026-07-15T12:07:30.000Z', `${period} ${source}`).toBe(true);
          expect(series.data.reduce((s, d) => s + d.pageviews, 0), `${period} ${source}`).toBe(3);
        }
      }
      // Without rows after now (the case in production) the rollups are read up to today's end
      // whole, with no raw slice: the same answers.
      const past = await projectWith([
        makeEvent({ ts: now - 1 }), makeEvent({ ts: now, visitor: 2 }), makeEvent({ ts: Date.parse('2026-07-15T12:00:00Z'), visitor: 3 }),
        makeEvent({ ts: Date.parse('2026-07-15T11:59:59.999Z'), visitor: 6 }), makeEvent({ ts: Date.parse('2026-07-01T00:00:00Z'), visitor: 7 }),
      ], 'Asia/Kolkata');
      const pastProject = (await getProject(h.deps.redis, (await findProjectIdByDomain(h.deps.redis, past))!))!;
      for (const period of ['this_month', '12m', '7d', 'today', '24h'] as const) {
        const want = period === 'this_month' || period === '12m' ? 5 : 4; // the 1st is before 7d
        for (const source of SOURCES) {
          const stats = await (findReport('stats') as PlannedReport).compute({ ...ctx, project: pastProject }, { period }, source);
          expect(stats, `${period} ${source}, no future rows`).toMatchObject({ pageviews: want, visitors: want });
          const series = (await (findReport('timeseries') as PlannedReport).compute({ ...ctx, project: pastProject }, { period }, source)) as { data: { pageviews: number }[] };
          expect(series.data.reduce((s, d) => s + d.pageviews, 0), `${period} ${source}, no future rows`).toBe(want);
        }
      }
      expect((await get(domain, 'timeseries', 'period=this_month')).body.data).toHaveLength(15);
      expect((await get(domain, 'timeseries', 'period=12m')).body.data.at(-1).date).toBe('2026-07-15T00:00:00.000Z');
      expect((await get(domain, 'timeseries', 'period=12m')).body.data[0].date).toBe('2025-08-01T00:00:00.000Z');
    } finally {
      clock.set(NOW);
    }
  });
});

describe('time series buckets', () => {
  it('24h on the hour: exactly the last 24 hours in 24 hourly buckets, zero-filled', async () => {
    // NOW is 18:00Z: buckets 18:00Z yesterday … 17:00Z today. An event exactly at now counts in the
    // last bucket, one exactly 24 h ago in the first; 1 ms before that and the future do not count.
    const domain = await projectWith([
      makeEvent({ ts: at(-0.5) }), makeEvent({ ts: at(0), visitor: 2 }), makeEvent({ ts: at(5.2) }),
      makeEvent({ ts: at(24), visitor: 3 }), makeEvent({ ts: at(24) - 1, visitor: 4 }),
    ]);
    const { body } = await get(domain, 'timeseries', 'period=24h');
    expect(body.granularity).toBe('hour');
    expect({ from: body.from, to: body.to }).toEqual({ from: '2026-03-07T18:00:00.000Z', to: '2026-03-08T18:00:00.000Z' });
    expect(body.data).toHaveLength(24);
    expect(body.data[0]).toEqual({ date: '2026-03-07T18:00:00.000Z', pageviews: 1, visitors: 1 });
    expect(body.data[23]).toEqual({ date: '2026-03-08T17:00:00.000Z', pageviews: 1, visitors: 1 });
    expect(body.data[18]).toEqual({ date: '2026-03-08T12:00:00.000Z', pageviews: 1, visitors: 1 });
    expect(body.data.filter((d: { pageviews: number }) => d.pageviews === 0)).toHaveLength(21);
    const starts = body.data.map((d: { date: string }) => Date.parse(d.date));
    expect(starts.every((t: number, i: number) => i === 0 || t - starts[i - 1] === HOUR)).toBe(true);
    expect((await get(domain, 'stats', 'period=24h')).body).toMatchObject({ pageviews: 3, visitors: 3 });
  });

  it('24h in the middle of an hour in +5:30: 25 clock-hour buckets, the first and last partial (both sources)', async () => {
    // 18:20Z is 23:50 in Kolkata: the period is 18:20Z yesterday … now, its hours start at :30Z.
    const now = Date.parse('2026-03-08T18:20:00Z');
    clock.set(now);
    try {
      const from = now - 24 * HOUR;
      const domain = await projectWith([
        makeEvent({ ts: from - 1 }), makeEvent({ ts: from, visitor: 2 }), makeEvent({ ts: from + 9 * 60_000, visitor: 3 }),
        makeEvent({ ts: now - 60_000, visitor: 4 }), makeEvent({ ts: now, visitor: 5 }), makeEvent({ ts: now + 1, visitor: 6 }),
        makeEvent({ ts: Date.parse('2026-03-08T06:45:00Z'), visitor: 7 }),
      ], 'Asia/Kolkata');
      const project = (await getProject(h.deps.redis, (await findProjectIdByDomain(h.deps.redis, domain))!))!;
      const ctx = { deps: h.deps, project, role: 'owner' as const };
      for (const source of SOURCES) {
        const series = (await (findReport('timeseries') as PlannedReport).compute(ctx, { period: '24h' }, source)) as {
          from: string; to: string; data: { date: string; pageviews: number; visitors: number }[];
        };
        expect({ from: series.from, to: series.to }, source).toEqual({ from: '2026-03-07T18:20:00.000Z', to: '2026-03-08T18:20:00.000Z' });
        expect(series.data, source).toHaveLength(25);
        expect(series.data[0], source).toEqual({ date: '2026-03-07T17:30:00.000Z', pageviews: 2, visitors: 2 });
        expect(series.data[24], source).toEqual({ date: '2026-03-08T17:30:00.000Z', pageviews: 2, visitors: 2 });
        expect(series.data[13], source).toEqual({ date: '2026-03-08T06:30:00.000Z', pageviews: 1, visitors: 1 });
        expect(series.data.reduce((s, d) => s + d.pageviews, 0), source).toBe(5);
        const stats = await (findReport('stats') as PlannedReport).compute(ctx, { period: '24h' }, source);
        expect(stats, source).toMatchObject({ pageviews: 5, visitors: 5 });
      }
    } finally {
      clock.set(NOW);
    }
  });

  it('24h across a DST change: 25 clock hours, the skipped 02:00 is no bucket (both sources)', async () => {
    // New York springs forward at 02:00 EST (07:00Z) on 2026-03-08; now is 14:20 EDT.
    const now = Date.parse('2026-03-08T18:20:00Z');
    clock.set(now);
    try {
      const domain = await projectWith([
        makeEvent({ ts: Date.parse('2026-03-08T06:59:59.999Z') }), // 01:59:59.999 EST
        makeEvent({ ts: Date.parse('2026-03-08T07:00:00Z'), visitor: 2 }), // 03:00 EDT
      ], 'America/New_York');
      const project = (await getProject(h.deps.redis, (await findProjectIdByDomain(h.deps.redis, domain))!))!;
      for (const source of SOURCES) {
        const series = (await (findReport('timeseries') as PlannedReport).compute({ deps: h.deps, project, role: 'owner' }, { period: '24h' }, source)) as {
          data: { date: string; pageviews: number }[];
        };
        expect(series.data, source).toHaveLength(25);
        expect(series.data[0]!.date, source).toBe('2026-03-07T18:00:00.000Z'); // 13:00 EST
        expect(series.data.slice(12, 14), source).toEqual([
          { date: '2026-03-08T06:00:00.000Z', pageviews: 1, visitors: 1 },
          { date: '2026-03-08T07:00:00.000Z', pageviews: 1, visitors: 1 },
        ]);
        expect(series.data[24]!.date, source).toBe('2026-03-08T18:00:00.000Z'); // 14:00 EDT
      }
    } finally {
      clock.set(NOW);
    }
  });

  it('7d and 30d: one bucket per local day, starting at local midnight', async () => {
    const domain = await projectWith([makeEvent({ ts: at(1) })], 'America/New_York');
    const week = (await get(domain, 'timeseries', 'period=7d')).body;
    expect(week.granularity).toBe('day');
    expect(week.data).toHaveLength(7);
    expect(week.data[0].date).toBe('2026-03-02T05:00:00.000Z'); // EST midnight
    expect(week.data[6]).toEqual({ date: '2026-03-08T05:00:00.000Z', pageviews: 1, visitors: 1 });
    expect((await get(domain, 'timeseries', 'period=30d')).body.data).toHaveLength(30);
  });

  it('DST days of 23 h and 25 h are one bucket each', async () => {
    // After spring-forward New York is UTC-4: the day ends at 04:00Z, 23 h after it began. Now is
    // its last millisecond; the event at 04:00Z is tomorrow, in the future.
    clock.set(Date.parse('2026-03-09T03:59:59.999Z'));
    try {
      const spring = await projectWith([makeEvent({ ts: Date.parse('2026-03-09T03:59:59.999Z') }), makeEvent({ ts: Date.parse('2026-03-09T04:00:00Z') })], 'America/New_York');
      const today = (await get(spring, 'timeseries', 'period=today')).body;
      expect(today.data).toEqual([{ date: '2026-03-08T05:00:00.000Z', pageviews: 1, visitors: 1 }]);
      expect(Date.parse(today.to) + 1 - Date.parse(today.from)).toBe(23 * HOUR);

      clock.set(Date.parse('2026-11-02T04:59:59.999Z'));
      const fall = await projectWith([makeEvent({ ts: Date.parse('2026-11-02T04:59:59.999Z') })], 'America/New_York');
      const day = (await get(fall, 'timeseries', 'period=today')).body;
      expect(day.data).toEqual([{ date: '2026-11-01T04:00:00.000Z', pageviews: 1, visitors: 1 }]);
      expect(Date.parse(day.to) + 1 - Date.parse(day.from)).toBe(25 * HOUR);
      const week = (await get(fall, 'timeseries', 'period=7d')).body;
      expect(week.data.map((d: { date: string }) => d.date).slice(-2)).toEqual(['2026-10-31T04:00:00.000Z', '2026-11-01T04:00:00.000Z']);
    } finally {
      clock.set(NOW);
    }
  });
});

describe('report errors', () => {
  const periodMessage = 'period must be one of: 24h, today, 7d, 30d, 90d, 6m, 12m, this_month, this_week';
  // The fixed analysis reports take custom ranges and all time too.
  const rangeMessage = `${periodMessage}, custom, all`;
  const RANGED = ['stats', 'timeseries', 'pages', 'referrers', 'countries', 'cities', 'devices', 'browsers', 'os', 'events'];

  it('400 for a bad period on every core report, naming the allowed values', async () => {
    const domain = await projectWith([]);
    for (const name of CORE) {
      for (const bad of ['1y', '', '30D']) {
        expect(await get(domain, name, `period=${bad}`), `${name} ${bad}`).toEqual({ status: 400, body: { error: RANGED.includes(name) ? rangeMessage : periodMessage } });
      }
    }
  });

  it('400 for a bad limit on every limited report', async () => {
    const domain = await projectWith([]);
    for (const name of LIMITED) {
      for (const bad of ['0', '101', '1.5', 'abc', '-1', '', '1e2']) {
        expect(await get(domain, name, `limit=${bad}`), `${name} ${bad}`).toEqual({ status: 400, body: { error: 'limit must be an integer from 1 to 100' } });
      }
    }
  });

  it('401 without or with a wrong key, 404 for a foreign or unknown project', async () => {
    const domain = await projectWith([], 'UTC', bob);
    for (const name of CORE) {
      const none = await h.call('GET', `/api/v1/projects/${domain}/${name}`);
      expect({ status: none.status, body: await none.json() }).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
      expect(await get(domain, name, '', 'sl_not_a_real_key'), name).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
      expect(await get(domain, name), name).toEqual({ status: 404, body: { error: 'Project not found' } });
      expect(await get('nothing-here.example.com', name), name).toEqual({ status: 404, body: { error: 'Project not found' } });
      expect((await get(domain, name, '', bob.readKey)).status, name).toBe(200);
    }
  });
});

describe('report rate limit', () => {
  it('429 once the API limit is spent', async () => {
    const tight = await createHarness({ clock, env: { RATE_LIMIT_API_PER_MIN: '2' } });
    const carol = await tight.user('carol');
    const domain = tight.domain('tight');
    const created = await tight.call('POST', '/api/v1/projects', { token: carol.writeKey, body: { name: 'Tight', domain } });
    expect(created.status).toBe(201);
    // The limit counts per key: the read key gets two reports, the third is refused.
    for (const name of ['stats', 'timeseries']) expect((await tight.call('GET', `/api/v1/projects/${domain}/${name}`, { token: carol.readKey })).status).toBe(200);
    const limited = await tight.call('GET', `/api/v1/projects/${domain}/pages`, { token: carol.readKey });
    expect({ status: limited.status, body: await limited.json() }).toEqual({ status: 429, body: { error: 'Too many requests' } });
  });
});

describe('registry, planner and API document', () => {
  it('documents every registered report with its parameters', async () => {
    const doc = (await (await h.call('GET', '/openapi.json')).json()) as { paths: Record<string, Record<string, any>> };
    for (const def of reports) {
      const path = `/api/v1/projects${def.path.replace(/:(\w+)/g, '{$1}')}`;
      const op = doc.paths[path]?.get;
      expect(op, path).toBeDefined();
      expect(op.tags).toEqual(['Reports']);
    }
    const pagesOp = doc.paths['/api/v1/projects/{domain}/pages']!.get;
    const period = pagesOp.parameters.find((p: { name: string }) => p.name === 'period');
    expect(period.schema.enum).toEqual([...RANGE_PERIODS]);
    expect(pagesOp.parameters.map((p: { name: string }) => p.name)).toContain('limit');
  });

  it('reads rollups unless the benchmark showed raw events faster (events over short periods, lists over 24h, pages over today)', () => {
    for (const name of CORE) for (const p of REPORT_PERIODS) expect(['rollup', 'raw']).toContain(planSource(name, p));
    expect(planSource('stats', '30d')).toBe('rollup');
    // Measured: a week of custom events scans faster raw than its states merge; a month reads the rollup.
    expect(planSource('events', '7d')).toBe('raw');
    expect(planSource('events', '30d')).toBe('rollup');
    expect(planSource('events', '90d')).toBe('rollup');
    // Measured: 24h holds no whole UTC day, so rollups read its 15-minute rows; its raw events cost less.
    for (const name of ['stats', 'timeseries', 'pages', 'countries', 'cities', 'devices', 'browsers', 'os']) {
      expect(planSource(name, '24h'), name).toBe('raw');
      expect(planSource(name, '7d'), name).toBe('rollup');
    }
    // Measured: over today only pages (ranked, then its top rows merged) gained from raw events.
    expect(planSource('pages', 'today')).toBe('raw');
    for (const name of ['stats', 'timeseries', 'countries', 'cities', 'devices', 'browsers', 'os']) expect(planSource(name, 'today'), name).toBe('rollup');
  });
});
