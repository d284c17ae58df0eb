import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { GOAL_BOT_PERIODS, resolvePeriod } from '../../src/reports/periods.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { addMember, callJson, csvLines, newProject, seededRandom } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';

const NOW = Date.parse('2026-05-20T09:30:00Z');
const DAY = 86_400_000;
const ZONE = 'Asia/Kolkata';
const ctx = useHarness(['alice', 'bob', 'carol'], { clock: fixedClock(NOW) });

const PATHS = ['/', '/blog/a', '/blog/b/c', '/blog', '/pricing', '/docs/x?y=1', '/docs/xzy=1', '/a/post-1', '/b.c'];
const SOURCES = ['(direct)', 'google.com', 't.co'];
const NAMES = ['signup', 'Purchase', 'download'];

/** ~1,500 events over 14 months (and a few after today) from 40 visitors. */
function generate(seed: number): GenEvent[] {
  const r = seededRandom(seed);
  const out: GenEvent[] = [];
  for (let i = 0; i < 1500; i++) {
    const visitor = r.int(1, 40);
    const kind = r.pick(['pageview', 'pageview', 'pageview', 'leave', 'custom', 'transaction'] as const);
    out.push(
      makeEvent({
        ts: NOW - r.int(-2 * DAY, 430 * DAY),
        kind,
        visitor,
        session: visitor * 100 + r.int(0, 5),
        path: r.pick(PATHS),
        referrerSource: r.pick(SOURCES),
        eventName: kind === 'custom' || kind === 'transaction' ? r.pick(NAMES) : '',
        amountCents: kind === 'transaction' ? r.int(1, 100_000) : 0,
        currency: kind === 'transaction' ? r.pick(['USD', 'USD', 'EUR', 'INR']) : '',
        durationMs: kind === 'leave' ? r.int(0, 600_000) : 0,
      }),
    );
  }
  return out;
}

/** `*` matches any run of characters; every other character itself (no regex involved). */
function globMatch(pattern: string, text: string): boolean {
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    if (memo.has(key)) return memo.get(key)!;
    let ok: boolean;
    if (i === pattern.length) ok = j === text.length;
    else if (pattern[i] === '*') ok = go(i + 1, j) || (j < text.length && go(i, j + 1));
    else ok = j < text.length && pattern[i] === text[j] && go(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0);
}

interface GoalInput { name: string; type: string; value: string; target?: number | null }

/** The goal metrics computed from the events in plain TypeScript. */
function reference(events: GenEvent[], g: GoalInput, from: number, to: number) {
  const inside = events.filter((e) => e.ts >= from && e.ts < to);
  const views = inside.filter((e) => e.kind === 'pageview');
  const visitors = new Set(views.map((e) => e.visitor)).size;
  const rate = (n: number) => (visitors > 0 ? n / visitors : null);
  const people = (list: GenEvent[]) => new Set(list.map((e) => e.visitor)).size;
  switch (g.type) {
    case 'event': {
      const n = people(inside.filter((e) => (e.kind === 'custom' || e.kind === 'transaction') && e.eventName === g.value));
      return { category: 'conversion', format: 'number', current: n, conversionRate: rate(n), currency: null };
    }
    case 'pageview': {
      const n = people(views.filter((e) => globMatch(g.value, e.path)));
      return { category: 'conversion', format: 'number', current: n, conversionRate: rate(n), currency: null };
    }
    case 'revenue': {
      const byCurrency = new Map<string, { count: number; sum: number }>();
      for (const e of inside) {
        if (e.kind !== 'transaction' || e.eventName !== g.value) continue;
        const c = byCurrency.get(e.currency) ?? { count: 0, sum: 0 };
        c.count++;
        c.sum += e.amountCents;
        byCurrency.set(e.currency, c);
      }
      const best = [...byCurrency].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1))[0];
      return { category: 'revenue', format: 'currency', current: best?.[1].sum ?? 0, conversionRate: null, currency: best?.[0] ?? null };
    }
    case 'traffic': {
      const n = g.value === '' ? visitors : people(views.filter((e) => e.referrerSource === g.value));
      return { category: 'traffic', format: 'number', current: n, conversionRate: null, currency: null };
    }
    default: {
      // Per visit: summed leave durations over the sessions with a leave (many have several).
      const leaves = inside.filter((e) => e.kind === 'leave');
      const visits = new Set(leaves.map((e) => e.session)).size;
      const avg = visits ? leaves.reduce((s, e) => s + e.durationMs, 0) / visits / 1000 : 0;
      return { category: 'engagement', format: 'duration', current: avg, conversionRate: null, currency: null };
    }
  }
}

const GOALS: GoalInput[] = [
  { name: 'Signups', type: 'event', value: 'signup', target: 50 },
  { name: 'Purchases (event)', type: 'event', value: 'Purchase' },
  { name: 'Never fired', type: 'event', value: 'nope' },
  { name: 'Blog', type: 'pageview', value: '/blog/*', target: null },
  { name: 'Any post', type: 'pageview', value: '/*/post-*' },
  { name: 'Docs literal', type: 'pageview', value: '/docs/x?y=1' },
  { name: 'Dot literal', type: 'pageview', value: '/b.c' },
  { name: 'Revenue', type: 'revenue', value: 'Purchase', target: 1_000_000 },
  { name: 'No revenue', type: 'revenue', value: 'signup' },
  { name: 'Google', type: 'traffic', value: 'google.com' },
  { name: 'All traffic', type: 'traffic', value: '' },
  { name: 'Engagement', type: 'engagement', value: '' },
];

describe('goals', () => {
  it('creates goals of every type and reports each per its definition, for every period', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice, ZONE);
    const events = generate(7);
    await insertEvents(ctx.h.deps.rowStore, id, events);
    const created: { id: string }[] = [];
    for (const g of GOALS) {
      const res = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/goals`, ctx.alice.writeKey, g);
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(String), name: g.name, type: g.type, value: g.value, target: g.target ?? null, createdAt: new Date(NOW).toISOString() });
      created.push(res.body);
    }

    for (const key of GOAL_BOT_PERIODS) {
      const period = resolvePeriod(key, ZONE, NOW);
      const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/goals?period=${key}`, ctx.alice.session);
      expect(res.status).toBe(200);
      expect(res.body.period).toBe(key);
      expect(res.body.from).toBe(new Date(period.from).toISOString());
      expect(res.body.to).toBe(new Date(NOW).toISOString());
      const expected = GOALS.map((g, i) => ({
        id: created[i]!.id,
        name: g.name,
        type: g.type,
        value: g.value,
        target: g.target ?? null,
        direction: 'up',
        ...reference(events, g, period.from, period.to),
      }));
      expect(res.body.goals).toHaveLength(expected.length);
      res.body.goals.forEach((got: Record<string, unknown>, i: number) => {
        const want = expected[i]!;
        expect({ ...got, current: undefined, conversionRate: undefined }).toEqual({ ...want, current: undefined, conversionRate: undefined });
        expect(got.current).toBeCloseTo(want.current, 9);
        if (want.conversionRate === null) expect(got.conversionRate).toBeNull();
        else expect(got.conversionRate).toBeCloseTo(want.conversionRate, 12);
      });
    }
    // Sanity: the data set exercises every type with non-zero values over 12m.
    const year = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/goals?period=12m`, ctx.alice.readKey);
    for (const name of ['Signups', 'Blog', 'Any post', 'Docs literal', 'Revenue', 'Google', 'Engagement']) {
      expect(year.body.goals.find((g: { name: string }) => g.name === name).current).toBeGreaterThan(0);
    }
    expect(year.body.goals.find((g: { name: string }) => g.name === 'Revenue').currency).toBe('USD');

    const csv = await csvLines(ctx.h, `/api/v1/projects/${domain}/goals?period=12m`, ctx.alice.readKey);
    expect(csv[0]).toBe('name,type,value,target,category,format,current,currency,conversion_rate');
    expect(csv).toHaveLength(GOALS.length + 1);
    expect(csv).toContain(`Google,traffic,google.com,,traffic,number,${year.body.goals[9].current},,`);

    // Default period is 30d; an API key gets the full data.
    const dflt = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/goals`, ctx.alice.readKey);
    expect(dflt.body.period).toBe('30d');
    expect(dflt.body.goals).toHaveLength(GOALS.length);
  });

  it('reports zero and null rates for a project without data, and deletes goals', async () => {
    const { domain } = await newProject(ctx.h, ctx.alice);
    const made = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/goals`, ctx.alice.writeKey, { name: 'E', type: 'event', value: 'x' });
    const eng = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/goals`, ctx.alice.writeKey, { name: 'Time', type: 'engagement' });
    expect(eng.body.value).toBe('');
    const empty = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/goals?period=today`, ctx.alice.readKey);
    expect(empty.body.goals.map((g: Record<string, unknown>) => [g.current, g.conversionRate])).toEqual([[0, null], [0, null]]);

    const del = await callJson(ctx.h, 'DELETE', `/api/v1/projects/${domain}/goals/${made.body.id}`, ctx.alice.writeKey);
    expect(del).toEqual({ status: 200, body: { ok: true } });
    const again = await callJson(ctx.h, 'DELETE', `/api/v1/projects/${domain}/goals/${made.body.id}`, ctx.alice.writeKey);
    expect(again).toEqual({ status: 404, body: { error: 'Goal not found' } });
    const after = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/goals`, ctx.alice.readKey);
    expect(after.body.goals.map((g: { name: string }) => g.name)).toEqual(['Time']);
  });
});

describe('goals: every refusal', () => {
  it('answers 400, 401, 403 and 404 where they apply', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    await addMember(ctx.h, id, ctx.bob, 'member');
    await addMember(ctx.h, id, ctx.carol, 'admin');
    const base = `/api/v1/projects/${domain}/goals`;
    const ok = { name: 'Signup', type: 'event', value: 'signup' };

    expect(await callJson(ctx.h, 'GET', `${base}?period=90d`, ctx.alice.readKey)).toEqual({
      status: 400,
      body: { error: 'period must be one of: today, 7d, 30d, 6m, 12m, custom, all' },
    });
    expect(await callJson(ctx.h, 'GET', base)).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    expect(await callJson(ctx.h, 'POST', base, undefined, ok)).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    expect(await callJson(ctx.h, 'POST', base, ctx.alice.readKey, ok)).toEqual({ status: 403, body: { error: 'API key is read-only' } });
    const someGoal = (await callJson(ctx.h, 'POST', base, ctx.alice.writeKey, ok)).body.id;
    expect(await callJson(ctx.h, 'DELETE', `${base}/${someGoal}`, ctx.alice.readKey)).toEqual({ status: 403, body: { error: 'API key is read-only' } });

    // A member reads goals but cannot manage them: 404 like a missing project.
    expect((await callJson(ctx.h, 'GET', base, ctx.bob.readKey)).status).toBe(200);
    expect(await callJson(ctx.h, 'POST', base, ctx.bob.writeKey, ok)).toEqual({ status: 404, body: { error: 'Project not found' } });
    expect(await callJson(ctx.h, 'DELETE', `${base}/${someGoal}`, ctx.bob.writeKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
    // An admin manages goals.
    expect((await callJson(ctx.h, 'POST', base, ctx.carol.writeKey, ok)).status).toBe(201);
    // A stranger sees no project.
    const stranger = await ctx.h.user('dave');
    expect(await callJson(ctx.h, 'GET', base, stranger.readKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
    expect(await callJson(ctx.h, 'POST', base, stranger.writeKey, ok)).toEqual({ status: 404, body: { error: 'Project not found' } });

    const bad: [unknown, string][] = [
      [{ ...ok, name: '' }, 'name is required (1–80 characters)'],
      [{ ...ok, name: '   ' }, 'name is required (1–80 characters)'],
      [{ ...ok, name: 'x'.repeat(81) }, 'name is required (1–80 characters)'],
      [{ type: 'event', value: 'x' }, 'Body must be a JSON object with name (1–80 characters), type and value'],
      [{ ...ok, type: 'scroll' }, 'type must be one of: event, pageview, revenue, traffic, engagement'],
      [{ ...ok, value: '' }, 'value is required for event, pageview and revenue goals'],
      [{ name: 'P', type: 'pageview' }, 'value is required for event, pageview and revenue goals'],
      [{ name: 'E', type: 'engagement', value: '/x' }, "value must be '' for engagement goals"],
      [{ ...ok, value: 5 }, 'value must be a string'],
      [{ ...ok, target: -1 }, 'target must be a number ≥ 0 or null'],
      [{ ...ok, target: '10' }, 'target must be a number ≥ 0 or null'],
      [[1, 2], 'Body must be a JSON object with name (1–80 characters), type and value'],
      [{ name: 'No type', value: 'x' }, 'Body must be a JSON object with name (1–80 characters), type and value'],
    ];
    for (const [body, error] of bad) {
      expect(await callJson(ctx.h, 'POST', base, ctx.alice.writeKey, body), JSON.stringify(body)).toEqual({ status: 400, body: { error } });
    }
    const notJson = await ctx.h.call('POST', base, { token: ctx.alice.writeKey, body: '{nope', headers: { 'Content-Type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: expect.any(String) });
    expect(await callJson(ctx.h, 'DELETE', `${base}/gol_unknown`, ctx.alice.writeKey)).toEqual({ status: 404, body: { error: 'Goal not found' } });
  });
});

describe('goals and funnels: the per-project limit holds under concurrent requests', () => {
  it('lets exactly 100 goals and 50 funnels through when more are sent at once, in creation order', async () => {
    const { domain } = await newProject(ctx.h, ctx.alice);
    const base = `/api/v1/projects/${domain}`;
    const goals = await Promise.all(
      Array.from({ length: 120 }, (_, i) => callJson(ctx.h, 'POST', `${base}/goals`, ctx.alice.writeKey, { name: `G${i}`, type: 'event', value: `e${i}` })),
    );
    expect(goals.filter((r) => r.status === 201)).toHaveLength(100);
    expect(goals.filter((r) => r.status === 400).map((r) => r.body)).toEqual(Array(20).fill({ error: 'A project can have at most 100 goals' }));
    const listed = (await callJson(ctx.h, 'GET', `${base}/goals?period=7d`, ctx.alice.readKey)).body.goals as { id: string; name: string }[];
    expect(listed).toHaveLength(100);
    // Listed in creation order: the order in which the script gave sequence numbers.
    const created = goals.filter((r) => r.status === 201).map((r) => r.body as { id: string; createdAt: string });
    expect(new Set(listed.map((g) => g.id))).toEqual(new Set(created.map((g) => g.id)));

    const steps = [{ type: 'pageview', value: '/' }, { type: 'event', value: 'signup' }];
    const funnels = await Promise.all(Array.from({ length: 60 }, (_, i) => callJson(ctx.h, 'POST', `${base}/funnels`, ctx.alice.writeKey, { name: `F${i}`, steps })));
    expect(funnels.filter((r) => r.status === 201)).toHaveLength(50);
    expect(funnels.filter((r) => r.status === 400)).toHaveLength(10);
    // A deleted goal frees its place.
    const one = created[0]!.id;
    expect((await callJson(ctx.h, 'DELETE', `${base}/goals/${one}`, ctx.alice.writeKey)).status).toBe(200);
    expect((await callJson(ctx.h, 'POST', `${base}/goals`, ctx.alice.writeKey, { name: 'Again', type: 'event', value: 'x' })).status).toBe(201);
  });
});

