import { describe, expect, it } from 'vitest';
import { withQuery } from '../../src/adapters/clickhouse.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { createApp } from '../../src/app.js';
import { VisitorSlices } from '../../src/reports/visitor-slices.js';
import { createServices } from '../../src/services.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { callJson, chTime, csvLines, newProject, seededRandom } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';
import { LATEST_VISITORS_OF_SLICE_SQL, ONE_VISITOR_SQL, VISITORS_BY_ID_SQL } from '../../src/reports/sql/visitors.js';

const NOW = Date.parse('2026-05-20T09:30:00Z');
const DAY = 86_400_000;
const ctx = useHarness(['alice', 'bob'], { clock: fixedClock(NOW) });

const PLACES = [
  { countryCode: 'US', countryName: 'United States', city: 'Chicago' },
  { countryCode: 'IN', countryName: 'India', city: 'Mumbai' },
  { countryCode: '', countryName: '', city: '' },
];

/** 25 visitors, ~600 events over 45 days; every timestamp distinct so "latest" and "first" are unambiguous. */
function generate(seed: number): GenEvent[] {
  const r = seededRandom(seed);
  const out: GenEvent[] = [];
  for (let i = 0; i < 600; i++) {
    const visitor = r.int(1, 25);
    const kind = r.pick(['pageview', 'pageview', 'pageview', 'leave', 'custom', 'transaction', 'vitals'] as const);
    out.push(makeEvent({
      ts: NOW - r.int(0, 45) * DAY - r.int(0, 86_000) * 1000 - i,
      kind,
      visitor,
      session: visitor * 100 + r.int(0, 3),
      path: r.pick(['/', '/a', '/b/c', '/pricing']),
      referrerSource: r.pick(['(direct)', 'google.com', 't.co']),
      ...r.pick(PLACES),
      device: r.pick(['Desktop', 'Mobile']),
      browser: r.pick(['Chrome', 'Firefox']),
      os: r.pick(['Windows', 'iOS']),
      eventName: kind === 'custom' || kind === 'transaction' ? r.pick(['signup', 'buy']) : '',
      amountCents: kind === 'transaction' ? r.int(1, 9999) : 0,
      currency: kind === 'transaction' ? r.pick(['USD', 'EUR']) : '',
      durationMs: kind === 'leave' ? r.int(0, 300_000) : 0,
    }));
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();
const orNull = (s: string) => (s === '' ? null : s);
const byTs = (a: GenEvent, b: GenEvent) => a.ts - b.ts;

/** A visitor's summary over [from, to), in plain TypeScript. */
function summarize(all: GenEvent[], from: number, to: number) {
  const mine = all.filter((e) => e.ts >= from && e.ts < to).sort(byTs);
  const views = mine.filter((e) => e.kind === 'pageview');
  const last = mine[mine.length - 1]!;
  return {
    visitorId: String(last.visitor),
    firstSeen: iso(mine[0]!.ts),
    lastSeen: iso(last.ts),
    pageviews: views.length,
    sessions: new Set(mine.map((e) => e.session)).size,
    events: mine.filter((e) => e.kind === 'custom' || e.kind === 'transaction').length,
    country: orNull(last.countryName),
    country_code: orNull(last.countryCode),
    city: orNull(last.city),
    device: orNull(last.device),
    browser: orNull(last.browser),
    os: orNull(last.os),
    lastPath: views.length ? views[views.length - 1]!.path : null,
    referrer: views.length ? views[0]!.referrerSource : null,
  };
}

function referenceList(events: GenEvent[], from: number, to: number, limit: number) {
  const visitors = [...new Set(events.filter((e) => e.ts >= from && e.ts < to).map((e) => e.visitor))];
  return visitors
    .map((v) => summarize(events.filter((e) => e.visitor === v), from, to))
    .sort((a, b) => Date.parse(b.lastSeen) - Date.parse(a.lastSeen) || Number(a.visitorId) - Number(b.visitorId))
    .slice(0, limit);
}

describe('visitors', () => {
  it('lists recent visitors last seen first with their summary, honouring limit and period', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const events = generate(11);
    await insertEvents(ctx.h.deps.rowStore, id, events);
    for (const [period, limit] of [['30d', 10], ['30d', 100], ['7d', 3], ['24h', 5], ['today', 100]] as const) {
      const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?period=${period}&limit=${limit}`, ctx.alice.readKey);
      expect(res.status).toBe(200);
      expect(res.body.period).toBe(period);
      expect(res.body.data, `${period} ${limit}`).toEqual(referenceList(events, Date.parse(res.body.from), Date.parse(res.body.to), limit));
    }
    const dflt = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors`, ctx.alice.readKey);
    expect(dflt.body.period).toBe('30d');
    expect(dflt.body.data).toHaveLength(10);
    const csv = await csvLines(ctx.h, `/api/v1/projects/${domain}/visitors?limit=4`, ctx.alice.readKey);
    expect(csv[0]).toBe('visitorId,firstSeen,lastSeen,pageviews,sessions,events,country,country_code,city,device,browser,os,lastPath,referrer');
    expect(csv.slice(1).map((l) => l.split(',')[0])).toEqual(dflt.body.data.slice(0, 4).map((v: { visitorId: string }) => v.visitorId));
    const all = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?limit=100`, ctx.alice.readKey);
    expect(all.body.data.length).toBeGreaterThan(10);
    expect(all.body.data.some((v: { country: unknown }) => v.country === null)).toBe(true);
  });

  it('stays exact when the recent slices hold fewer than limit visitors, ties at the slice edges included', async () => {
    // The list looks at the period's last day (its last hour once an answer showed that enough), then its last 7 days, then all of it (defs/visitors.ts).
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const empty = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?period=30d`, ctx.alice.readKey);
    expect(empty.body.data).toEqual([]);
    const to = Date.parse(empty.body.to);
    const dayEdge = to - DAY;
    const weekEdge = to - 7 * DAY;
    const at = (visitor: number, ts: number, path = `/v${visitor}`) => makeEvent({ ts, visitor, path, city: `c${visitor}` });
    const events = [
      at(60, to - 1000), at(60, to - 20 * DAY, '/old'), // in the last day, first seen long before
      at(50, dayEdge), at(40, dayEdge), // tied exactly on the first slice's start (inside it)
      at(30, dayEdge - 1), at(20, dayEdge - 1), at(20, to - 40 * DAY), // tied just before it
      at(10, weekEdge), // exactly on the 7-day slice's start
      at(70, to - 20 * DAY), at(5, to - 20 * DAY), at(5, weekEdge - 1, '/late'), // only in the whole period
    ];
    await insertEvents(ctx.h.deps.rowStore, id, events);
    const expected = [['60'], ['60', '40'], ['60', '40', '50'], ['60', '40', '50', '20'], ['60', '40', '50', '20', '30'],
      ['60', '40', '50', '20', '30', '10'], ['60', '40', '50', '20', '30', '10', '5'], ['60', '40', '50', '20', '30', '10', '5', '70']];
    for (const [i, ids] of expected.entries()) {
      const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?period=30d&limit=${i + 1}`, ctx.alice.readKey);
      expect(res.body.data.map((v: { visitorId: string }) => v.visitorId), `limit ${i + 1}`).toEqual(ids);
      expect(res.body.data).toEqual(referenceList(events, Date.parse(res.body.from), to, i + 1));
    }
    const all = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?period=30d&limit=100`, ctx.alice.readKey);
    expect(all.body.data).toHaveLength(8);
    expect(all.body.data[0]).toMatchObject({ visitorId: '60', firstSeen: iso(to - 20 * DAY), lastPath: '/v60' });
    expect(all.body.data[6]).toMatchObject({ visitorId: '5', lastSeen: iso(weekEdge - 1), lastPath: '/late' });
    // 90d reaches visitor 20's older event; 7d has no narrower slice than the last day.
    const wide = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?period=90d&limit=4`, ctx.alice.readKey);
    expect(wide.body.data).toEqual(referenceList(events, Date.parse(wide.body.from), Date.parse(wide.body.to), 4));
    expect(wide.body.data[3]).toMatchObject({ visitorId: '20', firstSeen: iso(to - 40 * DAY) });
    const week = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?period=7d&limit=100`, ctx.alice.readKey);
    expect(week.body.data).toEqual(referenceList(events, Date.parse(week.body.from), Date.parse(week.body.to), 100));
  });

  it('reads the last hour first once an answer showed it held the list, and looks wider again when it does not', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const HOUR = 3_600_000;
    const at = (visitor: number, ts: number) => makeEvent({ ts, visitor, path: `/v${visitor}` });
    const events = [
      ...Array.from({ length: 12 }, (_, i) => at(100 + i, NOW - (i + 1) * 180_000)), // the 36 minutes before NOW
      ...Array.from({ length: 8 }, (_, i) => at(200 + i, NOW - (3 + i) * HOUR)), // the day before them
      ...Array.from({ length: 5 }, (_, i) => at(300 + i, NOW - (3 + i) * DAY)), // the month before
    ];
    await insertEvents(ctx.h.deps.rowStore, id, events);
    const slices = new VisitorSlices();
    /** The list at `clock` with the slice starts its statements read, in order. */
    const ask = async (clock: number, limit: number) => {
      const starts: string[] = [];
      const recording = withQuery(ctx.h.deps.clickhouse, (params) => {
        const from = (params.query_params as { sliceFrom?: string } | undefined)?.sliceFrom;
        if (from !== undefined) starts.push(from);
        return ctx.h.deps.clickhouse.query(params);
      });
      const deps = { ...ctx.h.deps, clickhouse: recording, answers: undefined, clock: fixedClock(clock), visitorSlices: slices };
      const res = await createApp(deps, createServices(deps)).request(`/api/v1/projects/${domain}/visitors?period=30d&limit=${limit}`, {
        headers: { Authorization: `Bearer ${ctx.alice.readKey}` },
      });
      const body = (await res.json()) as { from: string; to: string; data: unknown[] };
      expect(body.data, `${iso(clock)} limit ${limit}`).toEqual(referenceList(events, Date.parse(body.from), Date.parse(body.to), limit));
      return starts;
    };
    // Slices start on the hour: the last hour's at 08:00 for 09:30, the last day's at 09:00 the day before.
    const hourOf = (clock: number) => chTime(Math.floor((clock - HOUR) / HOUR) * HOUR);
    const dayOf = (clock: number) => chTime(Math.floor((clock - DAY) / HOUR) * HOUR);
    expect(await ask(NOW, 10)).toEqual([dayOf(NOW)]);
    // The tenth visitor came 30 minutes ago: the last hour would have held the list.
    expect(await ask(NOW, 10)).toEqual([hourOf(NOW)]);
    expect(await ask(NOW, 10)).toEqual([hourOf(NOW)]);
    // Two hours later that hour holds none of them: the last day is read next, and first from then on.
    const later = NOW + 2 * HOUR;
    expect(await ask(later, 10)).toEqual([hourOf(later), dayOf(later)]);
    expect(await ask(later, 10)).toEqual([dayOf(later)]);
    // A list longer than the site's visitors looks wider each time, never at the last hour.
    const long = await ask(NOW, 100);
    expect(long[0]).toBe(dayOf(NOW));
    expect(long.length).toBeGreaterThan(1);
    expect(await ask(NOW, 100)).toEqual(long);
  });

  it('profiles one visitor: summary, sessions newest first, events oldest first', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const events = generate(12);
    await insertEvents(ctx.h.deps.rowStore, id, events);
    const visitor = 7;
    const mine = events.filter((e) => e.visitor === visitor);
    const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors/${visitor}?period=30d`, ctx.alice.readKey);
    expect(res.status).toBe(200);
    const from = Date.parse(res.body.from);
    const to = Date.parse(res.body.to);
    const inside = mine.filter((e) => e.ts >= from && e.ts < to);
    const { sessions: sessionCount, ...summary } = summarize(mine, from, to);
    const sessionIds = [...new Set(inside.map((e) => e.session))];
    const sessions = sessionIds
      .map((s) => {
        const list = inside.filter((e) => e.session === s).sort(byTs);
        const views = list.filter((e) => e.kind === 'pageview');
        return {
          sessionId: String(s),
          start: iso(list[0]!.ts),
          end: iso(list[list.length - 1]!.ts),
          pageviews: views.length,
          entryPath: views[0]?.path ?? null,
          exitPath: views[views.length - 1]?.path ?? null,
          referrer: views[0]?.referrerSource ?? null,
          events: list
            .filter((e) => e.kind === 'pageview' || e.kind === 'custom' || e.kind === 'transaction')
            .map((e) => ({
              ts: iso(e.ts),
              kind: e.kind,
              path: e.path,
              name: e.kind === 'pageview' ? null : e.eventName,
              amountCents: e.kind === 'transaction' ? e.amountCents : null,
              currency: e.kind === 'transaction' ? e.currency : null,
            })),
        };
      })
      .sort((a, b) => Date.parse(b.start) - Date.parse(a.start));
    expect(sessions.length).toBeGreaterThan(1);
    expect(res.body).toEqual({
      period: '30d',
      from: res.body.from,
      to: res.body.to,
      ...summary,
      sessionCount,
      totalDurationSeconds: inside.filter((e) => e.kind === 'leave').reduce((s, e) => s + e.durationMs, 0) / 1000,
      sessions,
    });
  });

  it('keeps the 200 most recent events and handles the largest 64-bit id', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const start = NOW - 3 * DAY;
    const many = Array.from({ length: 250 }, (_, i) => makeEvent({ ts: start + i * 60_000, visitor: 5, session: i < 125 ? 51 : 52, path: `/p${i}` }));
    await insertEvents(ctx.h.deps.rowStore, id, many);
    const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors/5`, ctx.alice.readKey);
    expect(res.body.pageviews).toBe(250);
    expect(res.body.sessions.map((s: { sessionId: string; events: unknown[] }) => [s.sessionId, s.events.length])).toEqual([['52', 125], ['51', 75]]);
    expect(res.body.sessions[1].events[0].path).toBe('/p50');

    expect(await csvLines(ctx.h, `/api/v1/projects/${domain}/visitors/5`, ctx.alice.readKey)).toEqual([
      'session_id,start,end,pageviews,entry_path,exit_path,referrer,events',
      `52,${new Date(start + 125 * 60_000).toISOString()},${new Date(start + 249 * 60_000).toISOString()},125,/p125,/p249,(direct),125`,
      `51,${new Date(start).toISOString()},${new Date(start + 124 * 60_000).toISOString()},125,/p0,/p124,(direct),75`,
    ]);

    const maxId = '18446744073709551615';
    await ctx.h.deps.rowStore.insert('events', [{ project_id: id, ts: chTime(NOW - 1000), kind: 'pageview', visitor_id: maxId, session_id: maxId, path: '/max' }]);
    const big = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors/${maxId}`, ctx.alice.readKey);
    expect(big.status).toBe(200);
    expect(big.body).toMatchObject({ visitorId: maxId, lastPath: '/max', sessionCount: 1, sessions: [{ sessionId: maxId }] });
    const list = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?limit=1`, ctx.alice.readKey);
    expect(list.body.data.map((v: { visitorId: string }) => v.visitorId)).toEqual([maxId]);
  });

  it('reads a visitor by id only from the granules the visitor index lets through', async () => {
    // Three earlier days of 9,000 events each (two granules a day) by visitors 1–3,001 but 1,500, who
    // comes only on the last day: the sort key (date, kind, visitor) picks a granule of every day for
    // any id, the bloom filter of migration 0027 only those that hold it.
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const others = [2, 3, 4].flatMap((day) =>
      Array.from({ length: 9000 }, (_, i) => makeEvent({ ts: NOW - day * DAY + i * 1000, visitor: 1 + (i % 3000) + (i % 3000 >= 1499 ? 1 : 0) })),
    );
    await insertEvents(ctx.h.deps.rowStore, id, others);
    await insertEvents(ctx.h.deps.rowStore, id, [makeEvent({ ts: NOW - 3_600_000, visitor: 1500 }), makeEvent({ ts: NOW - 60_000, visitor: 1500 })]);
    const params = {
      projectId: id, from: chTime(NOW - 30 * DAY), to: chTime(NOW + 1), readTo: chTime(NOW + 1),
      sliceFrom: chTime(NOW - DAY), limit: 1, ids: ['1500'], visitorId: '1500',
    };
    /** The granules the visitor index keeps of those the key analysis before it kept. */
    const throughIndex = async (sql: string) => {
      const rs = await ctx.h.deps.clickhouse.query({ query: `EXPLAIN indexes = 1 ${sql}`, query_params: params, format: 'JSONEachRow' });
      const lines = (await rs.json<{ explain: string }>()).map((r) => r.explain.trim());
      const at = lines.indexOf('Name: visitor_bloom');
      const granules = lines.slice(at).find((l) => l.startsWith('Granules:'));
      return at < 0 || !granules ? null : granules.replace('Granules: ', '').split('/').map(Number);
    };
    for (const sql of [LATEST_VISITORS_OF_SLICE_SQL, VISITORS_BY_ID_SQL, ONE_VISITOR_SQL]) {
      const [kept, before] = (await throughIndex(sql)) ?? [];
      expect(before, sql).toBeGreaterThanOrEqual(4);
      expect(kept, sql).toBe(1);
    }
    // And the list still reads right through it.
    const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/visitors?period=30d&limit=2`, ctx.alice.readKey);
    expect(res.body.data.map((v: { visitorId: string; pageviews: number }) => [v.visitorId, v.pageviews])).toEqual([['1500', 2], ['3001', 9]]);
  });
});

describe('visitors: every refusal', () => {
  it('answers 400 for bad parameters and ids, 404 for unknown visitors and foreign projects, 401 without a key', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    await insertEvents(ctx.h.deps.rowStore, id, [makeEvent({ ts: NOW - 60 * DAY, visitor: 3 })]);
    const base = `/api/v1/projects/${domain}/visitors`;
    for (const limit of ['0', '101', 'abc', '1.5']) {
      expect(await callJson(ctx.h, 'GET', `${base}?limit=${limit}`, ctx.alice.readKey)).toEqual({ status: 400, body: { error: 'limit must be an integer from 1 to 100' } });
    }
    // The list takes custom ranges and all time; a visitor's profile keeps the presets.
    const periodError = { status: 400, body: { error: 'period must be one of: 24h, today, 7d, 30d, 90d, 6m, 12m, this_month, this_week' } };
    expect(await callJson(ctx.h, 'GET', `${base}?period=1w`, ctx.alice.readKey)).toEqual({ status: 400, body: { error: 'period must be one of: 24h, today, 7d, 30d, 90d, 6m, 12m, this_month, this_week, custom, all' } });
    expect(await callJson(ctx.h, 'GET', `${base}/3?period=1w`, ctx.alice.readKey)).toEqual(periodError);
    const malformed = { status: 400, body: { error: 'visitorId must be an unsigned 64-bit integer in decimal (1–20 digits)' } };
    for (const bad of ['abc', '-1', '1e5', '123456789012345678901', '18446744073709551616']) {
      expect(await callJson(ctx.h, 'GET', `${base}/${bad}`, ctx.alice.readKey), bad).toEqual(malformed);
    }
    const notFound = { status: 404, body: { error: 'Visitor not found' } };
    expect(await callJson(ctx.h, 'GET', `${base}/999`, ctx.alice.readKey)).toEqual(notFound);
    // Visitor 3 exists, but not in the last 30 days.
    expect(await callJson(ctx.h, 'GET', `${base}/3`, ctx.alice.readKey)).toEqual(notFound);
    expect((await callJson(ctx.h, 'GET', `${base}/3?period=90d`, ctx.alice.readKey)).status).toBe(200);
    expect(await callJson(ctx.h, 'GET', base)).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    expect(await callJson(ctx.h, 'GET', `${base}/3`)).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    expect(await callJson(ctx.h, 'GET', base, ctx.bob.readKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
    expect(await callJson(ctx.h, 'GET', `${base}/3?period=90d`, ctx.bob.readKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
  });
});
