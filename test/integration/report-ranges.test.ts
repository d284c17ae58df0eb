import { parse } from 'csv-parse/sync';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { buildTools } from '../../src/mcp/tools.js';
import type { PlannedReport } from '../../src/reports/planned.js';
import { getProject } from '../../src/projects/store.js';
import { findReport } from '../../src/reports/registry.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { newProject } from '../helpers/report-fixtures.js';

/*
 * A project in Asia/Kolkata (+5:30). The custom range 2026-03-02…2026-03-05 is the local days
 * [2026-03-01T18:30Z, 2026-03-05T18:30Z): events one second or less either side of it must stay
 * out. Its previous period (previous_period) is 2026-02-26…2026-03-01 local.
 */
const NOW = Date.parse('2026-03-10T12:00:00Z'); // 17:30 on 2026-03-10 in Kolkata
const clock = fixedClock(NOW);
const ZONE = 'Asia/Kolkata';
const ts = (iso: string) => Date.parse(iso);

const RANGE = 'period=custom&from=2026-03-02&to=2026-03-05';
const RANGE_FROM = '2026-03-01T18:30:00.000Z';
const RANGE_TO = '2026-03-05T18:29:59.999Z';
const ALL_FROM = '2026-02-20T18:30:00.000Z'; // the local day (2026-02-21) of the first event
const PREVIOUS = { from: '2026-02-25T18:30:00.000Z', to: '2026-03-01T18:29:59.999Z' };

const MOBILE_IOS = { device: 'Mobile', os: 'iOS' };
const EVENTS: GenEvent[] = [
  // The first event, long before: visitor 5 on / with an `old` event.
  makeEvent({ ts: ts('2026-02-20T20:00:00Z'), visitor: 5, path: '/' }),
  makeEvent({ ts: ts('2026-02-20T20:01:00Z'), visitor: 5, kind: 'custom', eventName: 'old' }),
  // Just before the range (local 2026-03-01 23:59), in the previous period: visitor 3 (Chrome on an iPhone).
  makeEvent({ ts: ts('2026-03-01T18:29:00Z'), visitor: 3, path: '/a', ...MOBILE_IOS }),
  makeEvent({ ts: ts('2026-03-01T18:29:30Z'), visitor: 3, kind: 'custom', eventName: 'signup', path: '/a', ...MOBILE_IOS }),
  makeEvent({ ts: ts('2026-03-01T18:29:40Z'), visitor: 3, kind: 'vitals', path: '/a', ...MOBILE_IOS }),
  makeEvent({ ts: ts('2026-03-01T18:29:50Z'), visitor: 3, kind: 'custom', eventName: 'gone', path: '/a', ...MOBILE_IOS }),
  // The range's first instant: visitor 1 (Chrome, Windows) on /a, signs up.
  makeEvent({ ts: ts('2026-03-01T18:30:00Z'), visitor: 1, path: '/a' }),
  makeEvent({ ts: ts('2026-03-01T18:31:00Z'), visitor: 1, kind: 'custom', eventName: 'signup', path: '/a' }),
  makeEvent({ ts: ts('2026-03-01T18:32:00Z'), visitor: 1, kind: 'vitals', path: '/a' }),
  // The range's last minute: visitor 2 (Firefox, macOS) on /b, signs up and buys.
  makeEvent({ ts: ts('2026-03-05T18:20:00Z'), visitor: 2, path: '/b', browser: 'Firefox', os: 'macOS' }),
  makeEvent({ ts: ts('2026-03-05T18:25:00Z'), visitor: 2, kind: 'custom', eventName: 'signup', path: '/b', browser: 'Firefox', os: 'macOS' }),
  makeEvent({ ts: ts('2026-03-05T18:29:59Z'), visitor: 2, kind: 'transaction', eventName: 'buy', amountCents: 500, currency: 'EUR', path: '/b', browser: 'Firefox', os: 'macOS' }),
  // Right after the range (local 2026-03-06 00:00): visitor 4 (Android) on /a, signs up.
  makeEvent({ ts: ts('2026-03-05T18:30:00Z'), visitor: 4, path: '/a', device: 'Mobile', os: 'Android' }),
  makeEvent({ ts: ts('2026-03-05T18:30:30Z'), visitor: 4, kind: 'custom', eventName: 'signup', path: '/a', device: 'Mobile', os: 'Android' }),
  makeEvent({ ts: ts('2026-03-05T18:31:00Z'), visitor: 4, kind: 'vitals', path: '/a', device: 'Mobile', os: 'Android' }),
];

let h: Harness;
let alice: TestUser;
let domain: string;
let projectId: string;
let funnelId: string;

beforeAll(async () => {
  // Every bad range is also sent to the export, whose own per-minute limit is small.
  h = await createHarness({ clock, env: { RATE_LIMIT_EXPORT_PER_MIN: '1000' } });
  alice = await h.user('ranges');
  ({ domain, id: projectId } = await newProject(h, alice, ZONE));
  await insertEvents(h.deps.rowStore, projectId, EVENTS);
  const goal = await h.call('POST', `/api/v1/projects/${domain}/goals`, { token: alice.writeKey, body: { name: 'Signups', type: 'event', value: 'signup' } });
  expect(goal.status).toBe(201);
  const funnel = await h.call('POST', `/api/v1/projects/${domain}/funnels`, {
    token: alice.writeKey,
    body: { name: 'A then signup', steps: [{ type: 'pageview', value: '/a' }, { type: 'event', value: 'signup' }] },
  });
  expect(funnel.status).toBe(201);
  funnelId = ((await funnel.json()) as { id: string }).id;
});
afterAll(closeHarness);

async function get(path: string, query: string) {
  const res = await h.call('GET', `/api/v1/projects/${domain}/${path}?${query}`, { token: alice.readKey });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text, headers: res.headers };
}

/** GETs a report, checks it is 200 and matches the published response schema. */
async function report(name: string, query: string, path = name) {
  const { status, body } = await get(path, query);
  expect(status, `${path}?${query}: ${JSON.stringify(body)}`).toBe(200);
  expect(v.safeParse(findReport(name)!.response, body).issues, `${name} schema`).toBeUndefined();
  return body;
}

describe('a custom range in +5:30 keeps exactly its local days', () => {
  it('events', async () => {
    const body = await report('events', RANGE);
    expect(body).toEqual({
      period: 'custom',
      from: RANGE_FROM,
      to: RANGE_TO,
      data: [
        { name: 'signup', people: 2, events: 2, pct: 2 / 3, amountCents: null, currency: null, transactions: 0 },
        { name: 'buy', people: 1, events: 1, pct: 1 / 3, amountCents: 500, currency: 'EUR', transactions: 1 },
      ],
    });
  });

  it('devices', async () => {
    expect(await report('devices', RANGE)).toEqual({
      period: 'custom',
      from: RANGE_FROM,
      to: RANGE_TO,
      devices: [{ name: 'Desktop', visitors: 2 }],
      browsers: [{ name: 'Chrome', visitors: 1 }, { name: 'Firefox', visitors: 1 }],
      os: [{ name: 'Windows', visitors: 1 }, { name: 'macOS', visitors: 1 }],
    });
  });

  it('goals', async () => {
    const body = await report('goals', RANGE);
    expect(body).toMatchObject({ period: 'custom', from: RANGE_FROM, to: RANGE_TO });
    expect(body.goals).toEqual([expect.objectContaining({ name: 'Signups', current: 2, conversionRate: 1 })]);
  });

  it('visitors', async () => {
    const body = await report('visitors', RANGE);
    expect(body).toMatchObject({ period: 'custom', from: RANGE_FROM, to: RANGE_TO });
    expect(body.data.map((r: { visitorId: string; pageviews: number; events: number }) => [r.visitorId, r.pageviews, r.events])).toEqual([['2', 1, 2], ['1', 1, 1]]);
  });

  it('performance', async () => {
    const body = await report('performance', RANGE);
    expect(body).toMatchObject({ period: 'custom', from: RANGE_FROM, to: RANGE_TO });
    expect(body.overall.lcp).toEqual({ p75: 1234, avg: 1234, samples: 1, rating: 'good' });
    expect(body.pages).toEqual([expect.objectContaining({ path: '/a', samples: 1 })]);
  });

  it('funnels/{id}', async () => {
    const body = await report('funnel', RANGE, `funnels/${funnelId}`);
    expect(body).toMatchObject({ period: 'custom', from: RANGE_FROM, to: RANGE_TO });
    // Visitor 1 only: 3 and 4 did the same just outside, 2 never saw /a.
    expect(body.steps.map((s: { visitors: number }) => s.visitors)).toEqual([1, 1]);
  });

  it('a range ending today runs to now', async () => {
    const body = await report('events', 'period=custom&from=2026-03-05&to=2026-03-20');
    expect(body).toMatchObject({ from: '2026-03-04T18:30:00.000Z', to: new Date(NOW).toISOString() });
    expect(body.data.map((r: { name: string; events: number }) => [r.name, r.events])).toEqual([['signup', 2], ['buy', 1]]);
  });
});

describe('period=all starts on the local day of the first event and counts everything', () => {
  const ALL = { period: 'all', from: ALL_FROM, to: new Date(NOW).toISOString() };

  it('events, devices, goals', async () => {
    const events = await report('events', 'period=all');
    expect(events).toMatchObject(ALL);
    expect(events.data.map((r: { name: string; events: number; people: number }) => [r.name, r.events, r.people])).toEqual([
      ['signup', 4, 4], ['buy', 1, 1], ['gone', 1, 1], ['old', 1, 1],
    ]);
    const devices = await report('devices', 'period=all');
    expect(devices).toMatchObject({ ...ALL, devices: [{ name: 'Desktop', visitors: 3 }, { name: 'Mobile', visitors: 2 }] });
    const goals = await report('goals', 'period=all');
    expect(goals).toMatchObject(ALL);
    expect(goals.goals[0]).toMatchObject({ current: 4, conversionRate: 4 / 5 });
  });

  it('visitors, performance, funnels/{id}', async () => {
    const visitors = await report('visitors', 'period=all');
    expect(visitors).toMatchObject(ALL);
    expect(visitors.data.map((r: { visitorId: string }) => r.visitorId)).toEqual(['4', '2', '1', '3', '5']);
    const performance = await report('performance', 'period=all');
    expect(performance).toMatchObject(ALL);
    expect(performance.overall.lcp.samples).toBe(3);
    const funnel = await report('funnel', 'period=all', `funnels/${funnelId}`);
    expect(funnel).toMatchObject(ALL);
    expect(funnel.steps.map((s: { visitors: number }) => s.visitors)).toEqual([3, 3]);
  });
});

describe('compare', () => {
  it('events: shown rows gain their counts over the compared period, zeros when absent there', async () => {
    const body = await report('events', `${RANGE}&compare=previous_period`);
    expect(body.comparison).toEqual(PREVIOUS);
    // `gone` happened in the previous period only: it is not a row of this one.
    expect(body.data.map((r: { name: string; comparison: unknown }) => [r.name, r.comparison])).toEqual([
      ['signup', { events: 1, people: 1 }],
      ['buy', { events: 0, people: 0 }],
    ]);
    const one = await report('events', `${RANGE}&compare=previous_period&limit=1`);
    expect(one.data).toEqual([expect.objectContaining({ name: 'signup', comparison: { events: 1, people: 1 } })]);
  });

  it('events: with filters, and a comparison year with nothing', async () => {
    const desktop = await report('events', `${RANGE}&compare=previous_period&filters=${encodeURIComponent('device==Desktop')}`);
    // Visitor 3 (the previous period's signup) was on a phone.
    expect(desktop.data.map((r: { name: string; comparison: unknown }) => [r.name, r.comparison])).toEqual([
      ['signup', { events: 0, people: 0 }],
      ['buy', { events: 0, people: 0 }],
    ]);
    const yoy = await report('events', `${RANGE}&compare=year_over_year`);
    expect(yoy.comparison).toEqual({ from: '2025-03-01T18:30:00.000Z', to: '2025-03-05T18:29:59.999Z' });
    expect(yoy.data.every((r: { comparison: { events: number } }) => r.comparison.events === 0)).toBe(true);
  });

  it('events: the rollup and raw forms of the comparison agree', async () => {
    const events = findReport('events') as PlannedReport;
    const project = (await getProject(h.deps.redis, projectId))!;
    const ctx = { deps: h.deps, project, role: 'owner' as const };
    const input = { period: 'custom', from: '2026-03-01', to: '2026-03-05', compare: 'previous_period', limit: 20, filters: [] };
    const [rollup, raw] = await Promise.all([events.compute(ctx, input, 'rollup'), events.compute(ctx, input, 'raw')]);
    expect(raw).toEqual(rollup);
    expect((rollup as { data: { name: string; comparison: unknown }[] }).data[0]).toMatchObject({ name: 'signup', comparison: { events: 0, people: 0 } });
  });

  it('devices: every row of every list gains its visitors over the compared period', async () => {
    const body = await report('devices', `${RANGE}&compare=previous_period`);
    expect(body).toEqual({
      period: 'custom',
      from: RANGE_FROM,
      to: RANGE_TO,
      comparison: PREVIOUS,
      devices: [{ name: 'Desktop', visitors: 2, comparison: { visitors: 0 } }],
      browsers: [{ name: 'Chrome', visitors: 1, comparison: { visitors: 1 } }, { name: 'Firefox', visitors: 1, comparison: { visitors: 0 } }],
      os: [{ name: 'Windows', visitors: 1, comparison: { visitors: 0 } }, { name: 'macOS', visitors: 1, comparison: { visitors: 0 } }],
    });
  });

  it('reports without a comparison ignore compare, as unknown query keys are', async () => {
    const body = await report('visitors', `${RANGE}&compare=previous_period`);
    expect(body.comparison).toBeUndefined();
  });
});

describe('bad ranges answer 400 with the messages stats gives', () => {
  const BAD: [string, string][] = [
    ['period=custom&from=2026-03-05&to=2026-03-02', 'to must not be before from'],
    ['period=custom&from=2026-03-02', 'from and to (YYYY-MM-DD) are required with period=custom'],
    ['period=custom&to=2026-03-02', 'from and to (YYYY-MM-DD) are required with period=custom'],
    ['period=7d&from=2026-03-02&to=2026-03-05', 'from and to are only allowed with period=custom'],
    ['period=all&from=2026-03-02&to=2026-03-05', 'from and to are only allowed with period=custom'],
    ['period=custom&from=2026-02-30&to=2026-03-02', 'from must be a date (YYYY-MM-DD)'],
    ['period=custom&from=2021-01-01&to=2026-03-02', 'a custom range may be at most 1827 days long'],
    // 2026-03-11 is tomorrow in Kolkata (it is 17:30 on the 10th there).
    ['period=custom&from=2026-03-11&to=2026-03-12', "from must not be after today (2026-03-10 in the project's time zone)"],
  ];
  const PATHS = ['devices', 'events', 'goals', 'visitors', 'performance', 'funnels/:id', 'export'];

  it.each(BAD)('%s', async (query, message) => {
    const stats = await get('stats', query);
    expect({ status: stats.status, body: stats.body }).toEqual({ status: 400, body: { error: message } });
    for (const path of PATHS) {
      const got = await get(path.replace(':id', funnelId), query);
      expect({ status: got.status, body: got.body }, path).toEqual({ status: 400, body: { error: message } });
    }
  });

  it('goals name exactly the periods they accept; bots keep their presets', async () => {
    expect((await get('goals', 'period=90d')).body).toEqual({ error: 'period must be one of: today, 7d, 30d, 6m, 12m, custom, all' });
    expect((await get('bots', RANGE)).body).toEqual({ error: 'period must be one of: today, 7d, 30d, 6m, 12m' });
    expect((await get('bots', 'period=all')).status).toBe(400);
  });
});

describe('export', () => {
  const rows = (csv: string) => parse(csv, { comment: '#', relax_column_count: true }) as string[][];

  it('custom: the file name and the period line name the dates; every section covers the range', async () => {
    const res = await get('export', RANGE);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="sightline-${domain}-custom-2026-03-02-2026-03-05.csv"`);
    const text = res.body as string;
    expect(text).toContain(`# period: custom 2026-03-02 to 2026-03-05 (from ${RANGE_FROM} to ${RANGE_TO})\r\n`);
    expect(text).toContain(`# time zone: ${ZONE}\r\n`);
    const cells = rows(text);
    expect(cells).toContainEqual(['visitors', '2']);
    expect(cells).toContainEqual(['pageviews', '2']);
    expect(cells).toContainEqual(['/a', '1', '1']);
    expect(cells).toContainEqual(['/b', '1', '1']);
    expect(cells).toContainEqual(['Firefox', '1']);
  });

  it('all, and presets as before', async () => {
    const all = await get('export', 'period=all');
    expect(all.status).toBe(200);
    expect(all.headers.get('content-disposition')).toBe(`attachment; filename="sightline-${domain}-all.csv"`);
    expect(all.body).toContain(`# period: all (from ${ALL_FROM} to ${new Date(NOW).toISOString()})\r\n`);
    expect(rows(all.body)).toContainEqual(['visitors', '5']);
    const preset = await get('export', 'period=7d');
    expect(preset.status).toBe(200);
    expect(preset.headers.get('content-disposition')).toBe(`attachment; filename="sightline-${domain}-7d.csv"`);
    expect(preset.body).toContain('# period: 7d (from 2026-03-03T18:30:00.000Z to 2026-03-10T12:00:00.000Z)\r\n');
  });

  it('the export_csv tool offers the range', () => {
    const tool = buildTools().find((t) => t.name === 'export_csv')!;
    expect(tool.inputSchema.properties.period).toMatchObject({ enum: expect.arrayContaining(['7d', 'custom', 'all']) });
    expect(Object.keys(tool.inputSchema.properties)).toEqual(expect.arrayContaining(['from', 'to', 'limit', 'filters']));
  });
});
