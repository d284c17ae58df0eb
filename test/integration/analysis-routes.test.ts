import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { windowWithRoom } from '../helpers/rate-window.js';
import { insertEvents } from '../helpers/events-gen.js';
import { callJson, newProject } from '../helpers/report-fixtures.js';

/**
 * GET breakdown, POST query and GET realtime, over REST and MCP. Expected numbers come from a
 * small reference over the inserted events below (visits by session, visit attributes from the
 * first counted event, kept events by filter), never from the API's own output.
 */

const NOW = Date.parse('2026-03-18T15:30:20Z');
const MIN = 60_000;
const DAY = 86_400_000;
/** `7d` in UTC: the 12th 00:00 to now; its previous period: the 5th 00:00 to the 11th at now's clock time. */
const WEEK = { from: Date.parse('2026-03-12T00:00:00Z'), to: NOW + 1 };
const PREVIOUS = { from: Date.parse('2026-03-05T00:00:00Z'), to: NOW - 7 * DAY + 1 };

type Kind = 'pageview' | 'custom' | 'leave';
interface Ev {
  ts: number;
  kind: Kind;
  visitor: number;
  session: number;
  path: string;
  source: string;
  utmSource?: string;
  utmMedium?: string;
  country: string;
  device: string;
  eventName?: string;
  props?: Record<string, string>;
  durationMs?: number;
}

/** One visit: events at `start` + the offsets, sharing the visit's attributes. */
function visit(session: number, visitor: number, start: number, attrs: Partial<Ev>, steps: (Partial<Ev> & { at: number })[]): Ev[] {
  return steps.map(({ at, ...step }) => ({
    kind: 'pageview',
    path: '/',
    source: '(direct)',
    country: 'US',
    device: 'Desktop',
    ...attrs,
    ...step,
    ts: start + at,
    visitor,
    session,
  }));
}

const at = (iso: string) => Date.parse(iso);

/** The analysed project's events: six visits in the week, three in the week before, two outside both. */
const EVENTS: Ev[] = [
  ...visit(11, 1, at('2026-03-17T10:00:00Z'), { props: { plan: 'pro' } }, [
    { at: 0, path: '/' },
    { at: MIN, path: '/pricing' },
    { at: 2 * MIN, kind: 'custom', eventName: 'signup', path: '/pricing' },
    { at: 3 * MIN, kind: 'leave', path: '/pricing', durationMs: 30_000 },
  ]),
  ...visit(21, 2, at('2026-03-16T09:00:00Z'), { source: 'google.com', country: 'DE', device: 'Mobile', props: { plan: 'free' } }, [{ at: 0, path: '/pricing' }]),
  ...visit(31, 3, at('2026-03-15T12:00:00Z'), { source: 'google.com', utmSource: 'google', utmMedium: 'cpc' }, [
    { at: 0, path: '/' },
    { at: MIN, path: '/docs' },
  ]),
  ...visit(41, 4, at('2026-03-14T18:00:00Z'), { source: 't.co', country: 'IN' }, [
    { at: 0, path: '/docs' },
    { at: 30_000, kind: 'custom', eventName: 'download', path: '/docs', props: { plan: 'pro' } },
  ]),
  ...visit(12, 1, at('2026-03-13T07:00:00Z'), { source: 'newsletter', utmSource: 'newsletter', utmMedium: 'email' }, [{ at: 0, path: '/pricing' }]),
  ...visit(51, 5, at('2026-03-12T08:00:00Z'), { source: 'example.org', country: 'DE' }, [
    { at: 0, path: '/' },
    { at: MIN, path: '/pricing' },
  ]),
  // The previous week.
  ...visit(61, 6, at('2026-03-10T10:00:00Z'), {}, [
    { at: 0, path: '/' },
    { at: MIN, path: '/pricing' },
  ]),
  ...visit(71, 7, at('2026-03-08T10:00:00Z'), { source: 'google.com', country: 'DE' }, [{ at: 0, path: '/pricing' }]),
  ...visit(72, 7, at('2026-03-06T10:00:00Z'), { source: 'google.com', country: 'DE' }, [{ at: 0, path: '/docs' }]),
  // After the previous period's end (the 11th at 15:30:20) and before its start: in neither range.
  ...visit(81, 8, at('2026-03-11T16:00:00Z'), {}, [{ at: 0, path: '/pricing' }]),
  ...visit(91, 9, at('2026-03-04T23:59:59Z'), {}, [{ at: 0, path: '/pricing' }]),
];

/** GA4 channels of the sources above, written out by hand (not from src/analysis/channels.ts). */
function channelOf(e: Ev): string {
  if (e.utmMedium === 'cpc') return 'Paid Search';
  if (e.utmMedium === 'email') return 'Email';
  if (e.source === '(direct)') return 'Direct';
  if (e.source === 'google.com') return 'Organic Search';
  if (e.source === 't.co') return 'Organic Social';
  return 'Referral';
}

// ---- Reference -------------------------------------------------------------------------------

type Metric = 'visitors' | 'sessions' | 'pageviews' | 'events' | 'bounceRate';
type Row = Record<string, string | number | null>;
interface RefFilter {
  op: 'is' | 'is_not';
  dimension: string;
  values: string[];
}
const COUNTED = new Set<Kind>(['pageview', 'custom']);
const VISIT_DIMS = new Set(['source', 'channel', 'country', 'device', 'entryPage']);

/** A visit's attribute (first counted event; entry page = first pageview) or an event's own value. */
function valueOf(dimension: string, e: Ev, visitEvents: Ev[]): string {
  const first = visitEvents.find((x) => COUNTED.has(x.kind))!;
  switch (dimension) {
    case 'source':
      return first.source;
    case 'channel':
      return channelOf(first);
    case 'country':
      return first.country;
    case 'device':
      return first.device;
    case 'entryPage':
      return visitEvents.find((x) => x.kind === 'pageview')?.path ?? '';
    case 'page':
      return e.path;
    default:
      return e.props?.[dimension.slice(5)] ?? '';
  }
}

const holds = (f: RefFilter, value: string) => (f.op === 'is') === f.values.includes(value);

/**
 * The README semantics, spelled out: visits are a session's events in [from, to); visit-level
 * filters keep whole visits, event-level filters keep counted events; a row groups kept events by
 * the dimension values; counts read kept events, bounce rate the whole visits holding one.
 */
function reference(events: Ev[], range: { from: number; to: number }, dimensions: string[], metrics: Metric[], filters: RefFilter[] = []): Row[] {
  const inRange = events.filter((e) => e.ts >= range.from && e.ts < range.to).sort((a, b) => a.ts - b.ts);
  const visits = new Map<number, Ev[]>();
  for (const e of inRange) visits.set(e.session, [...(visits.get(e.session) ?? []), e]);
  const groups = new Map<string, { key: string[]; kept: Ev[] }>();
  for (const visitEvents of visits.values()) {
    if (!filters.filter((f) => VISIT_DIMS.has(f.dimension)).every((f) => holds(f, valueOf(f.dimension, visitEvents[0]!, visitEvents)))) continue;
    for (const e of visitEvents) {
      if (!COUNTED.has(e.kind)) continue;
      if (!filters.filter((f) => !VISIT_DIMS.has(f.dimension)).every((f) => holds(f, valueOf(f.dimension, e, visitEvents)))) continue;
      const key = dimensions.map((d) => valueOf(d, e, visitEvents));
      if (key.some((k) => k === '')) continue;
      const id = JSON.stringify(key);
      groups.set(id, { key, kept: [...(groups.get(id)?.kept ?? []), e] });
    }
  }
  return [...groups.values()].map(({ key, kept }) => {
    const row: Row = Object.fromEntries(dimensions.map((d, i) => [d, key[i]!]));
    const sessions = [...new Set(kept.map((e) => e.session))];
    const whole = sessions.map((s) => visits.get(s)!);
    const pageviewsOf = (v: Ev[]) => v.filter((e) => e.kind === 'pageview').length;
    const withPageviews = whole.filter((v) => pageviewsOf(v) > 0);
    const bounces = withPageviews.filter((v) => pageviewsOf(v) === 1 && !v.some((e) => e.kind === 'custom'));
    const values: Record<Metric, number | null> = {
      visitors: new Set(kept.map((e) => e.visitor)).size,
      sessions: sessions.length,
      pageviews: kept.filter((e) => e.kind === 'pageview').length,
      events: kept.filter((e) => e.kind === 'custom').length,
      bounceRate: withPageviews.length ? bounces.length / withPageviews.length : null,
    };
    for (const m of metrics) row[m] = values[m];
    return row;
  });
}

/** Code-point order (the values here are ASCII), as ClickHouse sorts strings. */
const byText = (a: unknown, b: unknown) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0);

/** Ranked as a breakdown: first metric descending, ties by value ascending. */
function ranked(rows: Row[], dimension: string, metric: Metric): Row[] {
  return [...rows].sort((a, b) => Number(b[metric]) - Number(a[metric]) || byText(a[dimension], b[dimension]));
}

// ---- Fixtures --------------------------------------------------------------------------------

let h: Harness;
let alice: TestUser;
let bob: TestUser;
let site: { domain: string; id: string };
let live: { domain: string; id: string };
let bobSite: { domain: string; id: string };

/** The events as the shared generator's rows (Chrome on Windows, no city), stored straight into `events`. */
async function insert(projectId: string, events: Ev[]) {
  await insertEvents(
    h.deps.rowStore,
    projectId,
    events.map(({ source, country, ...e }) => ({
      ...e,
      referrerSource: source,
      countryCode: country,
      countryName: '',
      city: '',
      browser: 'Chrome',
      os: 'Windows',
      eventName: e.eventName ?? '',
      amountCents: 0,
      currency: '',
      durationMs: e.durationMs ?? 0,
    })),
  );
}

/** The realtime project: events inside and outside the 5- and 30-minute windows. */
const LIVE: Ev[] = [
  ...visit(101, 10, NOW - MIN, { source: 'news.ycombinator.com' }, [{ at: 0, path: '/live' }]),
  ...visit(111, 11, NOW - 5 * MIN + 1000, {}, [
    { at: 0, path: '/' },
    { at: MIN, kind: 'custom', eventName: 'signup', path: '/' },
  ]),
  // Exactly at now: counted. One millisecond after: not.
  ...visit(121, 12, NOW, { source: 'news.ycombinator.com' }, [{ at: 0, path: '/live' }]),
  ...visit(131, 13, NOW + 1, {}, [{ at: 0, path: '/future' }]),
  // A leave alone does not make a visitor.
  ...visit(141, 14, NOW - 2 * MIN, {}, [{ at: 0, kind: 'leave', path: '/gone', durationMs: 5000 }]),
  // Just outside 5 minutes: only in the minute series.
  ...visit(151, 15, NOW - 5 * MIN - 1, { source: 'google.com' }, [{ at: 0, path: '/old' }]),
  // 15:01:00.000 opens the first of the 30 minutes; 15:00:59.999 is before it.
  ...visit(161, 16, at('2026-03-18T15:01:00Z'), {}, [{ at: 0, path: '/older' }, { at: 10_000, path: '/older' }]),
  ...visit(171, 17, at('2026-03-18T15:00:59.999Z'), {}, [{ at: 0, path: '/oldest' }]),
];

beforeAll(async () => {
  h = await createHarness({ clock: fixedClock(NOW) });
  alice = await h.user('alice');
  bob = await h.user('bob');
  site = await newProject(h, alice);
  live = await newProject(h, alice);
  bobSite = await newProject(h, bob);
  await insert(site.id, EVENTS);
  await insert(live.id, LIVE);
  await insert(bobSite.id, EVENTS);
});
afterAll(async () => {
  await closeHarness();
});

const api = (domain: string, rest: string) => `/api/v1/projects/${domain}${rest}`;
const get = (path: string, token = alice.readKey) => callJson(h, 'GET', path, token);
const post = (path: string, body: unknown, token = alice.readKey) => callJson(h, 'POST', path, token, body);

// ---- breakdown -------------------------------------------------------------------------------

describe('GET breakdown', () => {
  it('ranks pages by visitors, then pageviews, with the period bounds (read key)', async () => {
    const { status, body } = await get(api(site.domain, '/breakdown?dimension=page&metrics=visitors,pageviews&period=7d'));
    expect(status).toBe(200);
    expect(body).toMatchObject({ period: '7d', from: new Date(WEEK.from).toISOString(), to: new Date(NOW).toISOString(), dimension: 'page' });
    expect(body.data).toEqual(ranked(reference(EVENTS, WEEK, ['page'], ['visitors', 'pageviews']), 'page', 'visitors'));
    // `/` and `/pricing` tie on visitors (3): `/` first by value; /pricing has more pageviews.
    expect(body.data.slice(0, 2)).toEqual([
      { page: '/', visitors: 3, pageviews: 3 },
      { page: '/pricing', visitors: 3, pageviews: 4 },
    ]);
  });

  it('breaks down by a custom property and by channel', async () => {
    const props = await get(api(site.domain, '/breakdown?dimension=prop:plan&metrics=events,visitors&period=7d'));
    expect(props.status).toBe(200);
    expect(props.body.data).toEqual(ranked(reference(EVENTS, WEEK, ['prop:plan'], ['events', 'visitors']), 'prop:plan', 'events'));
    expect(props.body.data.map((r: Row) => r['prop:plan'])).toEqual(['pro', 'free']);

    const channels = await get(api(site.domain, '/breakdown?dimension=channel&metrics=visitors,sessions,bounceRate&period=7d&limit=20'));
    expect(channels.status).toBe(200);
    const expected = ranked(reference(EVENTS, WEEK, ['channel'], ['visitors', 'sessions', 'bounceRate']), 'channel', 'visitors');
    expect(channels.body.data).toEqual(expected);
    expect(new Set(expected.map((r) => r.channel))).toEqual(new Set(['Direct', 'Organic Search', 'Paid Search', 'Organic Social', 'Email', 'Referral']));
  });

  it('filters, and compares with the previous period for the same values', async () => {
    const { status, body } = await get(api(site.domain, '/breakdown?dimension=country&metrics=visitors,pageviews&period=7d&compare=previous_period&filters=page%3D%3D%2Fpricing%7C%2Fdocs'));
    expect(status).toBe(200);
    const filters: RefFilter[] = [{ op: 'is', dimension: 'page', values: ['/pricing', '/docs'] }];
    const now = ranked(reference(EVENTS, WEEK, ['country'], ['visitors', 'pageviews'], filters), 'country', 'visitors');
    const before = new Map(reference(EVENTS, PREVIOUS, ['country'], ['visitors', 'pageviews'], filters).map((r) => [r.country, r]));
    expect(body.comparison).toEqual({ from: new Date(PREVIOUS.from).toISOString(), to: new Date(PREVIOUS.to - 1).toISOString() });
    expect(body.data).toEqual(
      now.map((r) => {
        const b = before.get(r.country!);
        return { ...r, comparison: { visitors: b?.visitors ?? 0, pageviews: b?.pageviews ?? 0 } };
      }),
    );
    // The comparison is not vacuous: one country had visits in both weeks, one only in this one.
    expect(body.data.find((r: Row) => r.country === 'DE').comparison).toEqual({ visitors: 1, pageviews: 2 });
    expect(body.data.find((r: Row) => r.country === 'IN').comparison).toEqual({ visitors: 0, pageviews: 0 });
  });

  it('pages with limit and offset', async () => {
    const all = ranked(reference(EVENTS, WEEK, ['page'], ['pageviews']), 'page', 'pageviews');
    expect(all.length).toBe(3);
    const { body } = await get(api(site.domain, '/breakdown?dimension=page&metrics=pageviews&period=7d&limit=1&offset=1'));
    expect(body.data).toEqual(all.slice(1, 2));
    const past = await get(api(site.domain, '/breakdown?dimension=page&metrics=pageviews&period=7d&limit=5&offset=3'));
    expect(past.body.data).toEqual([]);
  });

  it('answers CSV with Accept: text/csv', async () => {
    const res = await h.call('GET', api(site.domain, '/breakdown?dimension=page&metrics=visitors,pageviews&period=7d&compare=previous_period'), { token: alice.readKey, headers: { Accept: 'text/csv' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await res.text()).split('\r\n').filter((l) => l !== '' && !l.startsWith('#'));
    const rows = ranked(reference(EVENTS, WEEK, ['page'], ['visitors', 'pageviews']), 'page', 'visitors');
    const before = new Map(reference(EVENTS, PREVIOUS, ['page'], ['visitors', 'pageviews']).map((r) => [r.page, r]));
    expect(lines).toEqual([
      'page,visitors,pageviews,comparison_visitors,comparison_pageviews',
      ...rows.map((r) => [r.page, r.visitors, r.pageviews, before.get(r.page!)?.visitors ?? 0, before.get(r.page!)?.pageviews ?? 0].join(',')),
    ]);
  });

  it('answers 400 naming what is allowed', async () => {
    const cases: [string, RegExp][] = [
      ['dimension=nope', /^dimension must be one of: page, hostname, event, prop:<key>, source, channel, /],
      ['', /^dimension must be one of: /],
      ['dimension=time:day', /^dimension must be one of: /],
      ['dimension=page&metrics=visitors,nope', /^metrics must be a comma-separated list of: visitors, sessions, pageviews, bounceRate, viewsPerVisit, avgDurationSeconds, events$/],
      ['dimension=page&metrics=visitors,visitors', /^metrics must be a comma-separated list of: /],
      ['dimension=page&limit=0', /^limit must be an integer from 1 to 1000$/],
      ['dimension=page&limit=1001', /^limit must be an integer from 1 to 1000$/],
      ['dimension=page&offset=-1', /^offset must be an integer from 0 to 100000$/],
      ['dimension=page&offset=100001', /^offset must be an integer from 0 to 100000$/],
      ['dimension=page&filters=nope', /^filters: "nope" must be <dimension>==value/],
      ['dimension=page&compare=sometime', /^compare must be one of: previous_period, year_over_year$/],
      ['dimension=page&period=custom', /^from and to \(YYYY-MM-DD\) are required with period=custom$/],
    ];
    for (const [query, message] of cases) {
      const { status, body } = await get(api(site.domain, `/breakdown?${query}`));
      expect(status, query).toBe(400);
      expect(body.error, query).toMatch(message);
    }
  });

  it('takes a custom range', async () => {
    const { status, body } = await get(api(site.domain, '/breakdown?dimension=page&period=custom&from=2026-03-05&to=2026-03-11'));
    expect(status).toBe(200);
    const range = { from: Date.parse('2026-03-05T00:00:00Z'), to: Date.parse('2026-03-12T00:00:00Z') };
    expect(body.data).toEqual(ranked(reference(EVENTS, range, ['page'], ['visitors']), 'page', 'visitors'));

    // All time starts on the day of the project's first event (the 4th).
    const all = await get(api(site.domain, '/breakdown?dimension=page&metrics=pageviews&period=all'));
    expect(all.body).toMatchObject({ period: 'all', from: '2026-03-04T00:00:00.000Z', to: new Date(NOW).toISOString() });
    expect(all.body.data).toEqual(ranked(reference(EVENTS, { from: 0, to: NOW + 1 }, ['page'], ['pageviews']), 'page', 'pageviews'));
  });
});

// ---- query -----------------------------------------------------------------------------------

describe('POST query', () => {
  const question = {
    metrics: ['pageviews', 'visitors'],
    dimensions: ['country', 'page'],
    filters: [['is_not', 'device', ['Mobile']]],
    period: '7d',
    compare: 'previous_period',
    orderBy: [['page', 'asc'], ['pageviews', 'desc']],
  };
  const filters: RefFilter[] = [{ op: 'is_not', dimension: 'device', values: ['Mobile'] }];
  const order = (rows: Row[]) => [...rows].sort((a, b) => byText(a.page, b.page) || Number(b.pageviews) - Number(a.pageviews));

  it('answers two dimensions with a filter, an order and a comparison', async () => {
    const { status, body } = await post(api(site.domain, '/query'), question);
    expect(status).toBe(200);
    expect(body).toMatchObject({ period: '7d', from: new Date(WEEK.from).toISOString(), to: new Date(NOW).toISOString() });
    const rows = order(reference(EVENTS, WEEK, ['country', 'page'], ['pageviews', 'visitors'], filters));
    // Ties on (page, pageviews) are not ordered by the question: compare as sets, then check the order it asked for.
    expect(body.rows).toHaveLength(rows.length);
    expect(new Set(body.rows.map((r: Row) => JSON.stringify(r)))).toEqual(new Set(rows.map((r) => JSON.stringify({ country: r.country, page: r.page, pageviews: r.pageviews, visitors: r.visitors }))));
    expect(body.rows.map((r: Row) => r.page)).toEqual(rows.map((r) => r.page));
    expect(body.rows.map((r: Row) => r.pageviews)).toEqual(rows.map((r) => r.pageviews));
    // The Mobile visit (DE, /pricing) is filtered out: DE has one /pricing pageview left, of visitor 5.
    expect(body.rows.find((r: Row) => r.country === 'DE' && r.page === '/pricing')).toEqual({ country: 'DE', page: '/pricing', pageviews: 1, visitors: 1 });
    expect(body.comparison.from).toBe(new Date(PREVIOUS.from).toISOString());
    const before = reference(EVENTS, PREVIOUS, ['country', 'page'], ['pageviews', 'visitors'], filters);
    expect(new Set(body.comparison.rows.map((r: Row) => JSON.stringify(r)))).toEqual(new Set(before.map((r) => JSON.stringify({ country: r.country, page: r.page, pageviews: r.pageviews, visitors: r.visitors }))));
    expect(body.comparison.rows.length).toBeGreaterThan(0);
  });

  it('groups by day', async () => {
    const { body } = await post(api(site.domain, '/query'), { metrics: ['visitors'], dimensions: ['time:day'], period: '7d' });
    const days = new Map<string, Set<number>>();
    for (const e of EVENTS) if (e.ts >= WEEK.from && e.ts < WEEK.to && COUNTED.has(e.kind)) days.set(new Date(e.ts).toISOString().slice(0, 10), (days.get(new Date(e.ts).toISOString().slice(0, 10)) ?? new Set()).add(e.visitor));
    expect(body.rows).toEqual([...days.entries()].sort().map(([day, v]) => ({ 'time:day': day, visitors: v.size })));
  });

  it('answers CSV', async () => {
    const res = await h.call('POST', api(site.domain, '/query'), { token: alice.readKey, body: { metrics: ['visitors'], dimensions: ['source'], period: '7d' }, headers: { Accept: 'text/csv' } });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\r\n').filter((l) => l !== '' && !l.startsWith('#'));
    const rows = ranked(reference(EVENTS, WEEK, ['source'], ['visitors']), 'source', 'visitors');
    expect(lines).toEqual(['source,visitors', ...rows.map((r) => `${r.source},${r.visitors}`)]);
  });

  it('answers 400 with a clear message', async () => {
    const cases: [unknown, RegExp][] = [
      [{ metrics: [] }, /^metrics must be a non-empty array of distinct metrics from: visitors, /],
      [{ metrics: ['nope'] }, /^metrics must be a non-empty array/],
      [{ metrics: ['visitors', 'visitors'] }, /^metrics must be a non-empty array/],
      [{ dimensions: ['page'] }, /^metrics must be/],
      [{ metrics: ['visitors'], dimensions: ['page', 'country', 'device', 'os'] }, /^dimensions must be an array of at most 3 distinct dimensions/],
      [{ metrics: ['visitors'], dimensions: ['page', 'page'] }, /^dimensions must be an array of at most 3 distinct/],
      [{ metrics: ['visitors'], dimensions: ['nope'] }, /^dimensions must be/],
      [{ metrics: ['visitors'], dimensions: ['page'], orderBy: [['pageviews', 'desc']] }, /^orderBy must be an array of \[name, "asc" \| "desc"\] whose names are metrics or dimensions of the question$/],
      [{ metrics: ['visitors'], orderBy: [['visitors', 'up']] }, /^orderBy must be/],
      [{ metrics: ['visitors'], dimensions: ['time:hour'], period: '30d' }, /^time:hour is allowed for periods of at most 7 days$/],
      [{ metrics: ['visitors'], dimensions: ['time:hour'], period: 'custom', from: '2026-03-01', to: '2026-03-10' }, /^time:hour is allowed/],
      [{ metrics: ['visitors'], limit: 0 }, /^limit must be an integer from 1 to 10000$/],
      [{ metrics: ['visitors'], limit: 10001 }, /^limit must be an integer from 1 to 10000$/],
      [{ metrics: ['visitors'], offset: 1.5 }, /^offset must be an integer from 0 to 100000$/],
      [{ metrics: ['visitors'], filters: [['equals', 'page', ['/']]] }, /^filters: an operator is one of is, is_not, contains$/],
      [{ metrics: ['visitors'], filters: [['is', 'nope', ['/']]] }, /^filters: unknown dimension "nope"/],
      [{ metrics: ['visitors'], period: 'forever' }, /^period must be one of: /],
      [{ metrics: ['visitors'], dimension: 'page' }, /^unknown field: /],
    ];
    for (const [body, message] of cases) {
      const res = await post(api(site.domain, '/query'), body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatch(message);
    }
    const ok = await post(api(site.domain, '/query'), { metrics: ['visitors'], dimensions: ['time:hour'], period: '7d' });
    expect(ok.status).toBe(200);
  });
});

// ---- realtime --------------------------------------------------------------------------------

describe('GET realtime', () => {
  it('counts the last 5 minutes and the last 30 minutes per minute', async () => {
    const { status, body } = await get(api(live.domain, '/realtime'));
    expect(status).toBe(200);
    const recent = LIVE.filter((e) => e.ts >= NOW - 5 * MIN && e.ts <= NOW && COUNTED.has(e.kind));
    expect(body.visitors).toBe(new Set(recent.map((e) => e.visitor)).size);
    expect(body.visitors).toBe(3);
    const firstMinute = Date.parse('2026-03-18T15:01:00Z');
    const minutes = Array.from({ length: 30 }, (_, i) => firstMinute + i * MIN);
    expect(body.pageviews).toEqual(
      minutes.map((m) => ({ minute: new Date(m).toISOString(), pageviews: LIVE.filter((e) => e.kind === 'pageview' && e.ts >= m && e.ts < m + MIN && e.ts <= NOW).length })),
    );
    expect(body.pageviews[0]).toEqual({ minute: '2026-03-18T15:01:00.000Z', pageviews: 2 });
    expect(body.pageviews.at(-1)).toEqual({ minute: '2026-03-18T15:30:00.000Z', pageviews: 1 });
    expect(body.pages).toEqual([
      { path: '/live', visitors: 2 },
      { path: '/', visitors: 1 },
    ]);
    expect(body.sources).toEqual([
      { source: 'news.ycombinator.com', visitors: 2 },
      { source: '(direct)', visitors: 1 },
    ]);
  });

  it('answers CSV sections', async () => {
    const res = await h.call('GET', api(live.domain, '/realtime'), { token: alice.readKey, headers: { Accept: 'text/csv' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('visitors\r\n3\r\n');
    expect(text).toContain('minute,pageviews\r\n2026-03-18T15:01:00.000Z,2\r\n');
    expect(text).toContain('path,visitors\r\n/live,2\r\n/,1\r\n');
  });
});

// ---- access ----------------------------------------------------------------------------------

describe('access', () => {
  it("another user's project answers exactly as a missing one", async () => {
    for (const [method, rest, body] of [
      ['GET', '/breakdown?dimension=page', undefined],
      ['POST', '/query', { metrics: ['visitors'] }],
      ['GET', '/realtime', undefined],
    ] as const) {
      const theirs = await callJson(h, method, api(bobSite.domain, rest), alice.readKey, body);
      const missing = await callJson(h, method, api('no-such-project.example', rest), alice.readKey, body);
      expect(theirs, rest).toEqual({ status: 404, body: { error: 'Project not found' } });
      expect(missing, rest).toEqual(theirs);
      // Bob's own key sees it (the data is there).
      expect((await callJson(h, method, api(bobSite.domain, rest), bob.readKey, body)).status).toBe(200);
    }
  });

  it('needs a credential', async () => {
    expect((await h.call('GET', api(site.domain, '/realtime'))).status).toBe(401);
  });
});

// ---- MCP -------------------------------------------------------------------------------------

/** One tools/call over /mcp, in-process; returns the tool result and the RateLimit header. */
async function callTool(token: string, name: string, args: Record<string, unknown>) {
  const res = await h.call('POST', '/mcp', {
    token,
    headers: { Accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } };
  return { result: body.result, rateLimit: res.headers.get('RateLimit') ?? '' };
}
const remaining = (header: string) => Number(/;r=(\d+)/.exec(header)?.[1]);

describe('MCP tools', () => {
  it('query, breakdown and realtime answer what REST answers', async () => {
    const { domain } = site;
    const q = await callTool(alice.readKey, 'query', { domain, ...question() });
    expect(q.result.isError).toBeFalsy();
    expect(q.result.structuredContent).toEqual((await post(api(domain, '/query'), question())).body);

    const b = await callTool(alice.readKey, 'breakdown', { domain, dimension: 'prop:plan', metrics: 'visitors,events', period: '7d', limit: 5, compare: 'previous_period' });
    expect(b.result.isError).toBeFalsy();
    const rest = (await get(api(domain, '/breakdown?dimension=prop:plan&metrics=visitors,events&period=7d&limit=5&compare=previous_period'))).body;
    expect(JSON.parse(b.result.content[0]!.text)).toEqual(rest);
    expect(rest.data.length).toBe(2);

    const r = await callTool(alice.readKey, 'realtime', { domain: live.domain });
    expect(r.result.structuredContent).toEqual((await get(api(live.domain, '/realtime'))).body);
    expect((r.result.structuredContent as { visitors: number }).visitors).toBe(3);
  });

  it('give the REST messages as tool errors, and the same not-found for a foreign project', async () => {
    const bad = await callTool(alice.readKey, 'breakdown', { domain: site.domain, dimension: 'nope' });
    expect(bad.result.isError).toBe(true);
    expect(bad.result.content[0]!.text).toBe((await get(api(site.domain, '/breakdown?dimension=nope'))).body.error);
    const badQuery = await callTool(alice.readKey, 'query', { domain: site.domain, metrics: ['visitors'], limit: 0 });
    expect(badQuery.result.content[0]!.text).toBe('limit must be an integer from 1 to 10000');
    for (const name of ['query', 'breakdown', 'realtime']) {
      const args = name === 'query' ? { metrics: ['visitors'] } : name === 'breakdown' ? { dimension: 'page' } : {};
      const theirs = await callTool(alice.readKey, name, { domain: bobSite.domain, ...args });
      const missing = await callTool(alice.readKey, name, { domain: 'no-such-project.example', ...args });
      expect(theirs.result).toEqual({ isError: true, content: [{ type: 'text', text: 'Project not found' }] });
      expect(missing.result).toEqual(theirs.result);
    }
  });

  it('a tool call counts once against the rate limit (no second request through the app)', async () => {
    const carol = await h.user('carol');
    // Three calls in one window: across a boundary the sliding weight can free a slot between them.
    await windowWithRoom(h.deps.config.RATE_LIMIT_WINDOW_SEC, 10_000);
    const first = await callTool(carol.readKey, 'realtime', { domain: 'no-such-project.example' });
    const second = await callTool(carol.readKey, 'report_stats', { domain: 'no-such-project.example' });
    const third = await callTool(carol.readKey, 'breakdown', { domain: 'no-such-project.example', dimension: 'page' });
    expect(remaining(second.rateLimit)).toBe(remaining(first.rateLimit) - 1);
    expect(remaining(third.rateLimit)).toBe(remaining(second.rateLimit) - 1);
  });
});

function question() {
  return { metrics: ['visitors', 'pageviews'], dimensions: ['country', 'page'], filters: [['is', 'country', ['US', 'DE']]], period: '7d', compare: 'previous_period', orderBy: [['visitors', 'desc'], ['country', 'asc'], ['page', 'asc']] };
}
