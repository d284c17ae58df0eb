import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { parseFilters } from '../../src/analysis/filters.js';
import { resolvePeriod, type PeriodKey } from '../../src/reports/periods.js';
import { findReport } from '../../src/reports/registry.js';
import { eventsArb, insertEvents, makeEvent, timesAround, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const NOW = Date.parse('2026-05-20T15:30:00Z'); // a Wednesday
const HOUR = 3_600_000;
const clock = fixedClock(NOW);
const at = (hoursAgo: number) => NOW - hoursAgo * HOUR;

const DE_BERLIN = { countryCode: 'DE', countryName: 'Germany', city: 'Berlin' };
const DE_MUNICH = { countryCode: 'DE', countryName: 'Germany', city: 'Munich' };
const IN_MUMBAI = { countryCode: 'IN', countryName: 'India', city: 'Mumbai' };
const US_CHICAGO = { countryCode: 'US', countryName: 'United States', city: 'Chicago' };

/**
 * Visits with known sources, places, pages and bounces. Later pageviews of a visit carry
 * '(direct)' as ingest stores a same-site referrer. The last seven days (7d at NOW) hold six
 * visits; the seven days before hold three (previous_period); one lies a year earlier.
 */
const EVENTS: GenEvent[] = [
  // Visitor 1, first visit: from google.com, on to /pricing through the site's links, signs up, leaves after 30 s.
  makeEvent({ ts: at(50), visitor: 1, session: 10, path: '/', referrerSource: 'google.com', ...DE_BERLIN }),
  makeEvent({ ts: at(49.9), visitor: 1, session: 10, path: '/pricing', ...DE_BERLIN }),
  makeEvent({ ts: at(49.8), kind: 'custom', eventName: 'signup', visitor: 1, session: 10, path: '/pricing', ...DE_BERLIN }),
  makeEvent({ ts: at(49.7), kind: 'leave', durationMs: 30_000, visitor: 1, session: 10, path: '/pricing', ...DE_BERLIN }),
  // Visitor 2: one page, direct, leaves after 10 s.
  makeEvent({ ts: at(30), visitor: 2, session: 20, path: '/', browser: 'Firefox', os: 'macOS' }),
  makeEvent({ ts: at(29.9), kind: 'leave', durationMs: 10_000, visitor: 2, session: 20, browser: 'Firefox', os: 'macOS' }),
  // Visitor 3: from Hacker News, two pages.
  makeEvent({ ts: at(5), visitor: 3, session: 30, path: '/blog', referrerSource: 'news.ycombinator.com', browser: 'Safari', os: 'iOS', ...DE_MUNICH }),
  makeEvent({ ts: at(4.9), visitor: 3, session: 30, path: '/pricing', browser: 'Safari', os: 'iOS', ...DE_MUNICH }),
  // Visitor 5: a stored empty source (folded into (direct)).
  makeEvent({ ts: at(3), visitor: 5, session: 50, path: '/', referrerSource: '', ...US_CHICAGO }),
  // Visitor 4: from google.com, an unrecognized browser.
  makeEvent({ ts: at(2), visitor: 4, session: 40, path: '/pricing', referrerSource: 'google.com', browser: '', os: 'Android', ...IN_MUMBAI }),
  // Visitor 1 again, from t.co; the vitals event counts for nothing.
  makeEvent({ ts: at(1), visitor: 1, session: 11, path: '/blog', referrerSource: 't.co', ...DE_BERLIN }),
  makeEvent({ ts: at(0.5), kind: 'vitals', visitor: 1, session: 11, path: '/blog', ...DE_BERLIN }),
  // The seven days before: visitor 6 from google.com (two pages), 7 direct, 9 reads /a1 and /a2 twice each.
  makeEvent({ ts: at(24 * 8), visitor: 6, session: 60, path: '/', referrerSource: 'google.com', ...DE_BERLIN }),
  makeEvent({ ts: at(24 * 8 - 0.1), visitor: 6, session: 60, path: '/pricing', ...DE_BERLIN }),
  makeEvent({ ts: at(24 * 9), visitor: 7, session: 70, path: '/about' }),
  ...['/a1', '/a1', '/a2', '/a2'].map((path, i) => makeEvent({ ts: at(24 * 10 - i * 0.1), visitor: 9, session: 90, path })),
  // A year earlier (2025-05-20 10:30Z), from google.com.
  makeEvent({ ts: at(24 * 365 + 5), visitor: 8, session: 80, path: '/pricing', referrerSource: 'google.com' }),
];

// ---- An independent computation of the pipeline's semantics (README "Analysis") ----

type Attrs = { source: string; country: string; city: string; browser: string; os: string };
type Kept = { session: number; visitor: number; attrs: Attrs; all: GenEvent[]; kept: GenEvent[] };
type Filter = { event?: (e: GenEvent) => boolean; visit?: (a: Attrs) => boolean };
const COUNTED = new Set(['pageview', 'custom', 'transaction']);

/** The visits of [from, now] that hold a kept event, with their attributes from the first counted event. */
function keptVisits(from: number, now: number, f: Filter = {}, events: readonly GenEvent[] = EVENTS): Kept[] {
  const sessions = new Map<number, GenEvent[]>();
  for (const e of events) if (e.ts >= from && e.ts <= now) sessions.set(e.session, [...(sessions.get(e.session) ?? []), e]);
  const out: Kept[] = [];
  for (const [session, all] of sessions) {
    const counted = all.filter((e) => COUNTED.has(e.kind)).sort((a, b) => a.ts - b.ts);
    const first = counted[0];
    if (!first) continue;
    const attrs = { source: first.referrerSource, country: first.countryCode, city: first.city, browser: first.browser, os: first.os };
    if (f.visit && !f.visit(attrs)) continue;
    const kept = counted.filter((e) => !f.event || f.event(e));
    if (kept.length) out.push({ session, visitor: first.visitor, attrs, all, kept });
  }
  return out;
}

function refStats(visits: Kept[]) {
  const pv = (k: Kept) => k.all.filter((e) => e.kind === 'pageview').length;
  const withViews = visits.filter((k) => pv(k) > 0);
  const bounces = withViews.filter((k) => pv(k) === 1 && !k.all.some((e) => e.kind === 'custom' || e.kind === 'transaction'));
  const leaving = visits.filter((k) => k.all.some((e) => e.kind === 'leave'));
  const duration = leaving.reduce((s, k) => s + k.all.reduce((t, e) => t + (e.kind === 'leave' ? e.durationMs : 0), 0), 0);
  return {
    pageviews: visits.reduce((s, k) => s + k.kept.filter((e) => e.kind === 'pageview').length, 0),
    visitors: new Set(visits.map((k) => k.visitor)).size,
    sessions: visits.length,
    avgDurationSeconds: leaving.length ? duration / leaving.length / 1000 : null,
    bounceRate: withViews.length ? bounces.length / withViews.length : null,
    viewsPerVisit: withViews.length ? withViews.reduce((s, k) => s + pv(k), 0) / withViews.length : null,
  };
}

/** Kept pageviews and visitors per key (an event's or its visit's), empty keys left out, ranked by `rankBy` then key (`\u0000` joins parts). */
function refGroups(visits: Kept[], key: (k: Kept, e: GenEvent) => string, rankBy: 'pageviews' | 'visitors') {
  const groups = new Map<string, { pageviews: number; visitors: Set<number> }>();
  for (const k of visits) {
    for (const e of k.kept) {
      const name = key(k, e);
      if (name === '') continue;
      const g = groups.get(name) ?? { pageviews: 0, visitors: new Set<number>() };
      if (e.kind === 'pageview') g.pageviews++;
      g.visitors.add(k.visitor);
      groups.set(name, g);
    }
  }
  return [...groups.entries()]
    .map(([name, g]) => ({ name, pageviews: g.pageviews, visitors: g.visitors.size }))
    .sort((a, b) => b[rankBy] - a[rankBy] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const SEVEN_DAYS = { from: Date.parse('2026-05-14T00:00:00Z'), now: NOW };
const PREVIOUS_SEVEN = { from: Date.parse('2026-05-07T00:00:00Z'), now: Date.parse('2026-05-13T15:30:00Z') };
const A_YEAR_EARLIER = { from: Date.parse('2025-05-14T00:00:00Z'), now: Date.parse('2025-05-20T15:30:00Z') };
const visitsIn = (p: { from: number; now: number }, f?: Filter) => keptVisits(p.from, p.now, f);

const byPage = (_k: Kept, e: GenEvent) => e.path;
const bySource = (k: Kept) => k.attrs.source || '(direct)';
const inGermany: Filter = { visit: (a) => a.country === 'DE' };
const onPricing: Filter = { event: (e) => e.path === '/pricing' };
const fromGoogle: Filter = { visit: (a) => a.source === 'google.com' };

// ---- The app ----

let h: Harness;
let alice: TestUser;
let domain: string;

beforeAll(async () => {
  h = await createHarness({ clock });
  alice = await h.user('presets');
  domain = h.domain('presets');
  const res = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Presets', domain } });
  expect(res.status).toBe(201);
  await insertEvents(h.deps.rowStore, ((await res.json()) as { id: string }).id, EVENTS);
});
afterAll(closeHarness);

async function get(report: string, query: string, accept?: string) {
  const res = await h.call('GET', `/api/v1/projects/${domain}/${report}?${query}`, { token: alice.readKey, headers: accept ? { Accept: accept } : {} });
  return { status: res.status, body: (accept ? await res.text() : await res.json()) as any };
}

/** GETs a report, checks it is 200 and matches the published response schema. */
async function report(name: string, query: string) {
  const { status, body } = await get(name, query);
  expect(status, `${name}?${query}: ${JSON.stringify(body)}`).toBe(200);
  expect(v.safeParse(findReport(name)!.response, body).issues, `${name} schema`).toBeUndefined();
  return body;
}

const numbers = (s: Record<string, unknown>) => ({
  pageviews: s.pageviews, visitors: s.visitors, sessions: s.sessions, avgDurationSeconds: s.avgDurationSeconds, bounceRate: s.bounceRate, viewsPerVisit: s.viewsPerVisit,
});

describe('stats', () => {
  it('unfiltered: the rollup totals as before, plus bounceRate and viewsPerVisit over the visits with a pageview', async () => {
    const body = await report('stats', 'period=7d');
    expect(numbers(body)).toEqual(refStats(visitsIn(SEVEN_DAYS)));
    // By hand: 6 visits with pageviews, 4 of them one page without a custom event; 8 pageviews.
    expect(body).toMatchObject({ pageviews: 8, visitors: 5, sessions: 6, avgDurationSeconds: 20, bounceRate: 4 / 6, viewsPerVisit: 8 / 6 });
    expect(body.comparison).toBeUndefined();
  });

  it('null rates when no visit has a pageview', async () => {
    const body = await report('stats', 'period=today&filters=page==/nowhere');
    expect(body).toMatchObject({ pageviews: 0, visitors: 0, sessions: 0, avgDurationSeconds: null, bounceRate: null, viewsPerVisit: null });
  });

  it.each([
    ['page==/pricing', onPricing, { pageviews: 3, visitors: 3, sessions: 3, avgDurationSeconds: 30, bounceRate: 1 / 3, viewsPerVisit: 5 / 3 }],
    ['country==DE', inGermany, { pageviews: 5, visitors: 2, sessions: 3, avgDurationSeconds: 30, bounceRate: 1 / 3, viewsPerVisit: 5 / 3 }],
  ] as const)('filters=%s: every number from the pipeline, rates over the whole visits holding a kept event', async (filters, filter, byHand) => {
    const body = await report('stats', `period=7d&filters=${encodeURIComponent(filters)}`);
    expect(numbers(body)).toEqual(refStats(visitsIn(SEVEN_DAYS, filter)));
    expect(numbers(body)).toEqual(byHand);
  });

  it('compare=previous_period and year_over_year add the same numbers over the compared period', async () => {
    const previous = await report('stats', 'period=7d&compare=previous_period');
    expect(previous.comparison).toEqual({ from: '2026-05-07T00:00:00.000Z', to: '2026-05-13T15:30:00.000Z', ...refStats(visitsIn(PREVIOUS_SEVEN)) });
    expect(previous.comparison).toMatchObject({ pageviews: 7, visitors: 3, sessions: 3, bounceRate: 1 / 3 });
    const filtered = await report('stats', `period=7d&compare=year_over_year&filters=${encodeURIComponent('source==google.com')}`);
    expect(numbers(filtered)).toEqual(refStats(visitsIn(SEVEN_DAYS, fromGoogle)));
    expect(filtered.comparison).toEqual({ from: '2025-05-14T00:00:00.000Z', to: '2025-05-20T15:30:00.000Z', ...refStats(visitsIn(A_YEAR_EARLIER, fromGoogle)) });
    expect(filtered.comparison).toMatchObject({ pageviews: 1, visitors: 1, bounceRate: 1 });
  });

  it('period=all starts on the day of the first event; custom ranges cover whole days', async () => {
    const all = await report('stats', 'period=all');
    expect(all.from).toBe('2025-05-20T00:00:00.000Z');
    expect(numbers(all)).toEqual(refStats(keptVisits(0, NOW)));
    const custom = await report('stats', `period=custom&from=2026-05-07&to=2026-05-12&filters=${encodeURIComponent('country==DE')}`);
    expect(numbers(custom)).toEqual(refStats(keptVisits(Date.parse('2026-05-07T00:00:00Z'), Date.parse('2026-05-12T23:59:59.999Z'), inGermany)));
    expect(custom.pageviews).toBe(2);
  });
});

describe('timeseries', () => {
  const dayOf = (_k: Kept, e: GenEvent) => new Date(e.ts).toISOString().slice(0, 10);
  const seriesOf = (days: string[], visits: Kept[]) => {
    const groups = new Map(refGroups(visits, dayOf, 'pageviews').map((g) => [g.name, g]));
    return days.map((d) => ({ date: `${d}T00:00:00.000Z`, pageviews: groups.get(d)?.pageviews ?? 0, visitors: groups.get(d)?.visitors ?? 0 }));
  };
  const dates = (first: string, n: number) => Array.from({ length: n }, (_, i) => new Date(Date.parse(first) + i * 86_400_000).toISOString().slice(0, 10));

  it('filtered day buckets, zero-filled, equal the reference; compare gives as many buckets', async () => {
    const body = await report('timeseries', `period=7d&compare=previous_period&filters=${encodeURIComponent('country==DE')}`);
    expect(body.granularity).toBe('day');
    expect(body.data).toEqual(seriesOf(dates('2026-05-14', 7), visitsIn(SEVEN_DAYS, inGermany)));
    expect(body.data.find((p: { date: string }) => p.date === '2026-05-18T00:00:00.000Z')).toEqual({ date: '2026-05-18T00:00:00.000Z', pageviews: 2, visitors: 1 });
    expect(body.comparison.from).toBe('2026-05-07T00:00:00.000Z');
    expect(body.comparison.data).toHaveLength(7);
    expect(body.comparison.data).toEqual(seriesOf(dates('2026-05-07', 7), visitsIn(PREVIOUS_SEVEN, inGermany)));
  });

  it('unfiltered with compare: the rollup series of both periods', async () => {
    const body = await report('timeseries', 'period=7d&compare=previous_period');
    expect(body.data).toEqual(seriesOf(dates('2026-05-14', 7), visitsIn(SEVEN_DAYS)));
    expect(body.comparison.data).toEqual(seriesOf(dates('2026-05-07', 7), visitsIn(PREVIOUS_SEVEN)));
  });

  it.each(['period=12m&interval=month', 'period=7d&interval=hour', 'period=all', 'period=24h&compare=year_over_year'])(
    '%s: the rollup series equals the pipeline\'s under a filter that keeps everything',
    async (range) => {
      const rollup = await report('timeseries', range);
      const pipeline = await report('timeseries', `${range}&filters=${encodeURIComponent('page!=/nowhere')}`);
      expect(pipeline).toEqual(rollup);
      expect(rollup.data.reduce((n: number, p: { pageviews: number }) => n + p.pageviews, 0)).toBeGreaterThan(0);
    },
  );

  it('month buckets: one per calendar month, this one holding every May pageview', async () => {
    const body = await report('timeseries', 'period=12m&interval=month');
    expect(body.granularity).toBe('month');
    expect(body.data).toHaveLength(12);
    expect(body.data[0].date).toBe('2025-06-01T00:00:00.000Z');
    expect(body.data[11]).toEqual({ date: '2026-05-01T00:00:00.000Z', pageviews: 15, visitors: 8 });
  });

  it('filtered hour buckets of 24h: keyed by the hour start instant', async () => {
    const body = await report('timeseries', `period=24h&filters=${encodeURIComponent('country==DE')}`);
    expect(body.granularity).toBe('hour');
    expect(body.data).toHaveLength(25);
    const nonZero = body.data.filter((p: { pageviews: number }) => p.pageviews > 0);
    // Visitor 3 at 10:30 and 10:36, visitor 1 at 14:30.
    expect(nonZero).toEqual([
      { date: '2026-05-20T10:00:00.000Z', pageviews: 2, visitors: 1 },
      { date: '2026-05-20T14:00:00.000Z', pageviews: 1, visitors: 1 },
    ]);
  });
});

describe('ranked lists with filters', () => {
  it('pages: event-level filter keeps matching pageviews; visit-level keeps whole visits', async () => {
    const pricing = await report('pages', `period=7d&filters=${encodeURIComponent('page==/pricing')}`);
    expect(pricing.data).toEqual([{ path: '/pricing', pageviews: 3, visitors: 3 }]);
    const germany = await report('pages', `period=7d&filters=${encodeURIComponent('country==DE')}`);
    const want = refGroups(visitsIn(SEVEN_DAYS, inGermany), byPage, 'pageviews').map((g) => ({ path: g.name, pageviews: g.pageviews, visitors: g.visitors }));
    expect(germany.data).toEqual(want);
    // Ties by name: /blog before /pricing (2 each).
    expect(germany.data.map((r: { path: string }) => r.path)).toEqual(['/blog', '/pricing', '/']);
    expect((await report('pages', `period=7d&limit=1&filters=${encodeURIComponent('country==DE')}`)).data).toEqual(want.slice(0, 1));
  });

  it('countries: name and code, ranked by pageviews', async () => {
    const body = await report('countries', `period=7d&filters=${encodeURIComponent('source==google.com')}`);
    expect(body.data).toEqual([
      { country: 'Germany', country_code: 'DE', pageviews: 2, visitors: 1 },
      { country: 'India', country_code: 'IN', pageviews: 1, visitors: 1 },
    ]);
  });

  it('countries: ties by country name, not by code (Germany before Switzerland, though CH < DE)', async () => {
    const site = h.domain('ties');
    const created = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Ties', domain: site } });
    await insertEvents(h.deps.rowStore, ((await created.json()) as { id: string }).id, [
      makeEvent({ ts: at(1), visitor: 1, countryCode: 'CH', countryName: 'Switzerland', city: 'Zurich' }),
      makeEvent({ ts: at(1), visitor: 2, ...DE_BERLIN }),
    ]);
    for (const query of ['period=7d&limit=1', `period=7d&limit=1&filters=${encodeURIComponent('page==/')}`]) {
      const res = await h.call('GET', `/api/v1/projects/${site}/countries?${query}`, { token: alice.readKey });
      expect((await res.json()).data, query).toEqual([{ country: 'Germany', country_code: 'DE', pageviews: 1, visitors: 1 }]);
    }
  });

  it('cities: ranked by visitors, ties by name', async () => {
    const body = await report('cities', `period=7d&filters=${encodeURIComponent('country==DE')}`);
    expect(body.data).toEqual([
      { city: 'Berlin', country: 'Germany', country_code: 'DE', visitors: 1, pageviews: 3 },
      { city: 'Munich', country: 'Germany', country_code: 'DE', visitors: 1, pageviews: 2 },
    ]);
  });

  it('browsers and os: ranked by visitors, an unrecognized one as Unknown', async () => {
    const browsers = await report('browsers', `period=7d&filters=${encodeURIComponent('source==google.com')}`);
    expect(browsers.data).toEqual([{ name: 'Chrome', visitors: 1 }, { name: 'Unknown', visitors: 1 }]);
    const os = await report('os', `period=7d&filters=${encodeURIComponent('page==/pricing')}`);
    expect(os.data).toEqual([{ name: 'Android', visitors: 1 }, { name: 'Windows', visitors: 1 }, { name: 'iOS', visitors: 1 }]);
  });

  it('referrers: filtered by an event-level dimension, by visit source', async () => {
    const body = await report('referrers', `period=7d&filters=${encodeURIComponent('page==/pricing')}`);
    // /pricing was reached from google.com (visitors 1 and 4) and Hacker News (visitor 3), never "directly".
    expect(body.data).toEqual([
      { referrer: 'google.com', pageviews: 2, visitors: 2 },
      { referrer: 'news.ycombinator.com', pageviews: 1, visitors: 1 },
    ]);
  });
});

describe('referrers by visit', () => {
  it('attributes each visit\'s pageviews and visitor to its source; an empty source is (direct)', async () => {
    const body = await report('referrers', 'period=7d');
    const want = refGroups(visitsIn(SEVEN_DAYS), bySource, 'pageviews').map((g) => ({ referrer: g.name, pageviews: g.pageviews, visitors: g.visitors }));
    expect(body.data).toEqual(want);
    expect(body.data).toEqual([
      { referrer: 'google.com', pageviews: 3, visitors: 2 },
      { referrer: '(direct)', pageviews: 2, visitors: 2 },
      { referrer: 'news.ycombinator.com', pageviews: 2, visitors: 1 },
      { referrer: 't.co', pageviews: 1, visitors: 1 },
    ]);
    expect((await report('referrers', 'period=7d&limit=2')).data).toEqual(want.slice(0, 2));
  });

  it('a visit the tracker sends, with same-site referrers on later pages, counts every pageview for its external source', async () => {
    const site = h.domain('tracked');
    const created = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Tracked', domain: site } });
    const { id } = (await created.json()) as { id: string };
    const headers = {
      'Content-Type': 'text/plain;charset=UTF-8',
      'User-Agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
      'X-Forwarded-For': '10.1.2.3',
    };
    const pages = [
      { path: '/', referrer: 'https://www.bing.com/search?q=sightline' },
      { path: '/features', referrer: `https://${site}/` },
      { path: '/pricing', referrer: `https://${site}/features` },
    ];
    try {
      for (const [i, page] of pages.entries()) {
        clock.set(at(0.5) + i * 60_000);
        const res = await h.app.request('/api/event', { method: 'POST', headers, body: JSON.stringify({ site: id, kind: 'pageview', url: `https://${site}${page.path}`, referrer: page.referrer }) });
        expect(res.status).toBe(202);
      }
      await h.deps.sink.flush();
    } finally {
      clock.set(NOW);
    }
    const stored = await (await h.deps.clickhouse.query({
      query: 'SELECT toString(referrer_source) AS s, uniqExact(session_id) AS n FROM events WHERE project_id = {id:String} GROUP BY s ORDER BY s',
      query_params: { id },
      format: 'JSONEachRow',
    })).json<{ s: string; n: string }>();
    // As stored: the later pageviews carry (direct); all three are one visit.
    expect(stored.map((r) => r.s)).toEqual(['(direct)', 'bing.com']);
    const res = await h.call('GET', `/api/v1/projects/${site}/referrers?period=today`, { token: alice.readKey });
    expect((await res.json()).data).toEqual([{ referrer: 'bing.com', pageviews: 3, visitors: 1 }]);
    const stats = await (await h.call('GET', `/api/v1/projects/${site}/stats?period=today`, { token: alice.readKey })).json();
    expect(stats).toMatchObject({ pageviews: 3, visitors: 1, sessions: 1, bounceRate: 0, viewsPerVisit: 3 });
  });
});

describe('compare on ranked lists', () => {
  it('pages: each shown row over the compared period, zeros when absent there, exact beyond any limit', async () => {
    const body = await report('pages', 'period=7d&limit=3&compare=previous_period');
    expect(body.comparison).toEqual({ from: '2026-05-07T00:00:00.000Z', to: '2026-05-13T15:30:00.000Z' });
    // In the previous seven days /a1 and /a2 (2 each) outrank / and /pricing (1 each), which are still compared exactly.
    expect(body.data).toEqual([
      { path: '/', pageviews: 3, visitors: 3, comparison: { pageviews: 1, visitors: 1 } },
      { path: '/pricing', pageviews: 3, visitors: 3, comparison: { pageviews: 1, visitors: 1 } },
      { path: '/blog', pageviews: 2, visitors: 2, comparison: { pageviews: 0, visitors: 0 } },
    ]);
  });

  it('filtered pages, referrers with the folded (direct) row, and browsers with Unknown', async () => {
    const pages = await report('pages', `period=7d&compare=previous_period&filters=${encodeURIComponent('country==DE')}`);
    const before = new Map(refGroups(visitsIn(PREVIOUS_SEVEN, inGermany), byPage, 'pageviews').map((g) => [g.name, g]));
    for (const row of pages.data) {
      const b = before.get(row.path);
      expect(row.comparison, row.path).toEqual({ pageviews: b?.pageviews ?? 0, visitors: b?.visitors ?? 0 });
    }
    const referrers = await report('referrers', 'period=7d&compare=previous_period');
    expect(referrers.data.map((r: { referrer: string; comparison: unknown }) => [r.referrer, r.comparison])).toEqual([
      ['google.com', { pageviews: 2, visitors: 1 }],
      ['(direct)', { pageviews: 5, visitors: 2 }],
      ['news.ycombinator.com', { pageviews: 0, visitors: 0 }],
      ['t.co', { pageviews: 0, visitors: 0 }],
    ]);
    const browsers = await report('browsers', 'period=7d&compare=year_over_year');
    expect(browsers.data).toEqual([
      { name: 'Chrome', visitors: 2, comparison: { pageviews: 1, visitors: 1 } },
      { name: 'Firefox', visitors: 1, comparison: { pageviews: 0, visitors: 0 } },
      { name: 'Safari', visitors: 1, comparison: { pageviews: 0, visitors: 0 } },
      { name: 'Unknown', visitors: 1, comparison: { pageviews: 0, visitors: 0 } },
    ]);
  });
});

describe('bad input and CSV', () => {
  const parserMessage = (text: string) => {
    try {
      parseFilters(text);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error(`${text} parses`);
  };

  it.each(['stats', 'timeseries', 'pages', 'referrers', 'countries', 'cities', 'browsers', 'os'])('%s: 400 with the parser\'s message for bad filters, and for a bad compare', async (name) => {
    for (const bad of ['nope', 'country<>DE', 'bogus==1']) {
      expect(await get(name, `period=7d&filters=${encodeURIComponent(bad)}`)).toEqual({ status: 400, body: { error: parserMessage(bad) } });
    }
    expect(await get(name, 'period=7d&compare=last_week')).toEqual({ status: 400, body: { error: 'compare must be one of: previous_period, year_over_year' } });
  });

  it('CSV of a filtered report, and the stats overview with bounce_rate and views_per_visit', async () => {
    const pages = await get('pages', `period=7d&filters=${encodeURIComponent('country==DE')}`, 'text/csv');
    expect(pages.status).toBe(200);
    expect(parse(pages.body, { comment: '#' })).toEqual([['path', 'pageviews', 'visitors'], ['/blog', '2', '2'], ['/pricing', '2', '2'], ['/', '1', '1']]);
    const stats = await get('stats', `period=7d&filters=${encodeURIComponent('page==/pricing')}`, 'text/csv');
    expect(parse(stats.body, { comment: '#' })).toEqual([
      ['metric', 'value'], ['visitors', '3'], ['pageviews', '3'], ['sessions', '3'], ['avg_duration_seconds', '30'],
      ['bounce_rate', String(1 / 3)], ['views_per_visit', String(5 / 3)],
    ]);
  });
});

describe('filtered reports over generated events, in zones with DST, equal the independent computation', () => {
  const ZONES = ['UTC', 'America/New_York', 'Europe/London', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham'];
  /** Filters and their meaning over the generated values (events-gen.ts). */
  const FILTERS: [string, Filter][] = [
    ['country==DE', inGermany],
    ['page==/a|/b', { event: (e) => e.path === '/a' || e.path === '/b' }],
    ['page==/blog/*', { event: (e) => e.path.startsWith('/blog/') }],
    ['source!=(direct)', { visit: (a) => a.source !== '(direct)' }],
    ['browser~=FIRE', { visit: (a) => a.browser.toLowerCase().includes('fire') }],
    ['os==iOS;page!=/', { visit: (a) => a.os === 'iOS', event: (e) => e.path !== '/' }],
  ];
  const LIMIT = 4;

  /** Local calendar date and clock-hour start of an instant, through Intl (not Temporal, unlike the app). */
  const localDate = (ms: number, timeZone: string) =>
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
  const localHourStart = (ms: number, timeZone: string) => {
    const parts = new Intl.DateTimeFormat('en-GB', { timeZone, minute: '2-digit', second: '2-digit' }).formatToParts(ms);
    const part = (type: string) => Number(parts.find((x) => x.type === type)!.value);
    return ms - part('minute') * 60_000 - part('second') * 1000 - (((ms % 1000) + 1000) % 1000);
  };
  const round = (body: unknown) => JSON.parse(JSON.stringify(body), (_k, x) => (typeof x === 'number' ? Math.round(x * 1e9) / 1e9 : x));
  const rows = <T>(groups: ReturnType<typeof refGroups>, shape: (name: string, g: { pageviews: number; visitors: number }) => T) =>
    groups.slice(0, LIMIT).map((g) => shape(g.name, g));

  const scenario = (period: PeriodKey) =>
    fc
      .record({
        timeZone: fc.constantFrom(...ZONES),
        day: fc.constantFrom('2026-03-08', '2026-03-29', '2026-11-01', '2026-06-15'),
        offsetMs: fc.integer({ min: -12 * HOUR, max: 36 * HOUR }),
        filter: fc.constantFrom(...FILTERS),
      })
      .chain((s) => {
        const now = Date.parse(`${s.day}T00:00:00Z`) + s.offsetMs;
        const p = resolvePeriod(period, s.timeZone, now);
        return eventsArb(timesAround(p.from, p.now, [p.from, ...p.buckets]), { maxLength: 40 }).map((generated) => {
          // One event per session and instant: which of two simultaneous events opens a visit is not defined.
          const seen = new Set<string>();
          const events = generated.filter((e) => !seen.has(`${e.session}:${e.ts}`) && !!seen.add(`${e.session}:${e.ts}`));
          return { ...s, period, now, events };
        });
      });

  it.each(['24h', '7d', 'this_week'] as const)('period %s', async (period) => {
    await fc.assert(
      fc.asyncProperty(scenario(period), async ({ timeZone, now, events, filter: [text, filter] }) => {
        clock.set(now);
        try {
          const site = h.domain('prop');
          const created = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Prop', domain: site, timeZone } });
          await insertEvents(h.deps.rowStore, ((await created.json()) as { id: string }).id, events);
          const p = resolvePeriod(period, timeZone, now);
          const visits = keptVisits(p.from, p.now, filter, events);
          const ask = async (name: string) => {
            const res = await h.call('GET', `/api/v1/projects/${site}/${name}?period=${period}&limit=${LIMIT}&filters=${encodeURIComponent(text)}`, { token: alice.readKey });
            const body = await res.json();
            expect(res.status, `${name}: ${JSON.stringify(body)}`).toBe(200);
            return body as any;
          };

          expect(round(numbers(await ask('stats'))), 'stats').toEqual(round(refStats(visits)));

          const hourly = p.granularity === 'hour';
          const lastHour = localHourStart(p.now - 1, timeZone);
          const bucketOf = (_k: Kept, e: GenEvent) =>
            hourly ? new Date(Math.min(localHourStart(e.ts, timeZone), lastHour)).toISOString() : localDate(e.ts, p.bucketTimeZone);
          const perBucket = new Map(refGroups(visits, bucketOf, 'pageviews').map((g) => [g.name, g]));
          const series = (await ask('timeseries')).data as { date: string; pageviews: number; visitors: number }[];
          expect(series.map((d) => d.date), 'timeseries buckets').toEqual(p.buckets.map((b) => new Date(b).toISOString()));
          for (const d of series) {
            const g = perBucket.get(hourly ? d.date : localDate(Date.parse(d.date), p.bucketTimeZone));
            expect({ pageviews: d.pageviews, visitors: d.visitors }, `timeseries ${d.date}`).toEqual({ pageviews: g?.pageviews ?? 0, visitors: g?.visitors ?? 0 });
          }

          expect((await ask('pages')).data, 'pages').toEqual(rows(refGroups(visits, byPage, 'pageviews'), (path, g) => ({ path, pageviews: g.pageviews, visitors: g.visitors })));
          expect((await ask('referrers')).data, 'referrers').toEqual(
            rows(refGroups(visits, bySource, 'pageviews'), (referrer, g) => ({ referrer, pageviews: g.pageviews, visitors: g.visitors })),
          );
          const names = new Map(events.map((e) => [e.countryCode, e.countryName]));
          const countryKey = (k: Kept) => (k.attrs.country ? `${names.get(k.attrs.country)}\u0000${k.attrs.country}` : '');
          expect((await ask('countries')).data, 'countries').toEqual(
            rows(refGroups(visits, countryKey, 'pageviews'), (key, g) => {
              const [country, code] = key.split('\u0000');
              return { country, country_code: code, pageviews: g.pageviews, visitors: g.visitors };
            }),
          );
          const cityKey = (k: Kept) => (k.attrs.city && k.attrs.country ? `${k.attrs.city}\u0000${k.attrs.country}` : '');
          expect((await ask('cities')).data, 'cities').toEqual(
            rows(refGroups(visits, cityKey, 'visitors'), (key, g) => {
              const [city, code] = key.split('\u0000');
              return { city, country: names.get(code!), country_code: code, visitors: g.visitors, pageviews: g.pageviews };
            }),
          );
          for (const [name, attr] of [['browsers', 'browser'], ['os', 'os']] as const) {
            const want = rows(refGroups(visits, (k) => k.attrs[attr] || 'Unknown', 'visitors'), (n, g) => ({ name: n, visitors: g.visitors }));
            expect((await ask(name)).data, name).toEqual(want);
          }
        } finally {
          clock.set(NOW);
        }
      }),
      { numRuns: 8, endOnFailure: true },
    );
  }, 120_000);
});
