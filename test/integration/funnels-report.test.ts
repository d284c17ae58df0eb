import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { REPORT_PERIODS } from '../../src/reports/periods.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { addMember, callJson, csvLines, newProject, seededRandom } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';

const NOW = Date.parse('2026-05-20T09:30:00Z');
const MIN = 60_000;
const DAY = 86_400_000;
const ctx = useHarness(['alice', 'bob'], { clock: fixedClock(NOW) });

type Step = { type: 'pageview' | 'event'; value: string };

/** Step matching as written in the contract of the route, without regexes: `*` = any run of characters. */
function globMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  if (!text.startsWith(parts[0]!)) return false;
  let at = parts[0]!.length;
  for (const mid of parts.slice(1, -1)) {
    const found = text.indexOf(mid, at);
    if (found < 0) return false;
    at = found + mid.length;
  }
  const last = parts[parts.length - 1]!;
  return text.length - at >= last.length && text.endsWith(last);
}

const matches = (s: Step, e: GenEvent) =>
  s.type === 'pageview' ? e.kind === 'pageview' && globMatch(s.value, e.path) : (e.kind === 'custom' || e.kind === 'transaction') && e.eventName === s.value;

/** Deepest step a session reaches: steps in order, one event per step, all within 30 minutes of step 1. */
function sessionLevel(events: GenEvent[], steps: Step[]): number {
  const sorted = [...events].sort((a, b) => a.ts - b.ts);
  let best = 0;
  sorted.forEach((start, i) => {
    if (!matches(steps[0]!, start)) return;
    let level = 1;
    for (const e of sorted.slice(i + 1)) {
      if (level === steps.length || e.ts > start.ts + 30 * MIN) break;
      if (matches(steps[level]!, e)) level++;
    }
    best = Math.max(best, level);
  });
  return best;
}

/** Visitors per step, computed in plain TypeScript. */
function reference(events: GenEvent[], steps: Step[], from: number, to: number) {
  const sessions = new Map<number, GenEvent[]>();
  for (const e of events) if (e.ts >= from && e.ts < to) sessions.set(e.session, [...(sessions.get(e.session) ?? []), e]);
  const reached = steps.map(() => new Set<number>());
  for (const list of sessions.values()) {
    const level = sessionLevel(list, steps);
    for (let i = 0; i < level; i++) reached[i]!.add(list[0]!.visitor);
  }
  const counts = reached.map((s) => s.size);
  return steps.map((s, i) => ({
    index: i + 1,
    type: s.type,
    value: s.value,
    visitors: counts[i],
    conversionRate: counts[0]! > 0 ? counts[i]! / counts[0]! : null,
    dropOff: i === 0 ? 0 : counts[i - 1]! - counts[i]!,
    dropOffRate: i === 0 || counts[i - 1] === 0 ? null : (counts[i - 1]! - counts[i]!) / counts[i - 1]!,
  }));
}

const FUNNEL: Step[] = [
  { type: 'pageview', value: '/blog/*' },
  { type: 'event', value: 'signup' },
  { type: 'pageview', value: '/welcome*' },
];

/** Hand-made journeys, one visitor each, starting 2 hours ago. */
function journeys(): GenEvent[] {
  const t0 = NOW - 2 * 3_600_000;
  const out: GenEvent[] = [];
  const add = (visitor: number, steps: [number, Partial<GenEvent>][], session = visitor * 10) =>
    steps.forEach(([minutes, e]) => out.push(makeEvent({ ts: t0 + minutes * MIN + visitor, visitor, session, ...e })));
  const blog = (path = '/blog/a'): Partial<GenEvent> => ({ kind: 'pageview', path });
  const signup: Partial<GenEvent> = { kind: 'custom', eventName: 'signup' };
  const welcome: Partial<GenEvent> = { kind: 'pageview', path: '/welcome/team' };
  add(1, [[0, blog()], [1, { kind: 'pageview', path: '/pricing' }], [2, signup], [3, welcome]]); // converts
  add(2, [[0, blog('/blog/x/y')], [5, signup]]); // reaches 2
  add(3, [[0, blog('/blog/')]]); // reaches 1 (`*` matches the empty run)
  add(4, [[0, blog()], [1, welcome]]); // skips the event: 1
  add(5, [[0, signup], [1, blog()], [2, welcome]]); // out of order: 1
  add(6, [[0, blog()]], 61); // across sessions: 1 in the first…
  add(6, [[5, signup], [6, welcome]], 62); // …0 in the second
  add(7, [[0, blog()], [31, signup], [32, welcome]]); // outside the 30-minute window: 1
  add(8, [[0, blog()], [1, { kind: 'transaction', eventName: 'signup', amountCents: 100, currency: 'USD' }], [2, { kind: 'pageview', path: '/welcome' }]]); // 3
  add(9, [[0, blog('/blog')], [1, signup], [2, welcome]]); // '/blog' is not '/blog/…': 0
  add(10, [[0, blog()], [1, signup]], 101); // 2 in one session…
  add(10, [[20, blog()], [21, signup], [22, welcome]], 102); // …3 in another: counts once at every step
  add(11, [[0, blog()], [1, { kind: 'custom', eventName: 'signup-later' }], [2, welcome]]); // wrong name: 1
  out.push(...[0, 1, 2].map((m) => makeEvent({ ts: NOW - 40 * DAY + m * MIN, visitor: 12, session: 120, ...[blog(), signup, welcome][m] }))); // before 30d
  return out;
}

describe('funnels', () => {
  it('counts visitors per step within one session, in order, inside the window', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const events = journeys();
    await insertEvents(ctx.h.deps.rowStore, id, events);
    const made = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/funnels`, ctx.alice.writeKey, { name: 'Signup flow', steps: FUNNEL });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ id: expect.any(String), name: 'Signup flow', steps: FUNNEL, createdAt: new Date(NOW).toISOString() });

    const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels/${made.body.id}?period=30d`, ctx.alice.readKey);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ period: '30d', funnel: { id: made.body.id, name: 'Signup flow' } });
    expect(res.body.steps.map((s: { visitors: number }) => s.visitors)).toEqual([10, 4, 3]); // step 1: all but 9 (and 12, too old); step 2: 1, 2, 8, 10; step 3: 1, 8, 10
    expect(res.body.steps).toEqual(reference(events, FUNNEL, Date.parse(res.body.from), Date.parse(res.body.to)));
    expect(res.body.steps[1]).toMatchObject({ dropOff: 6, dropOffRate: 6 / 10, conversionRate: 4 / 10 });

    expect(await csvLines(ctx.h, `/api/v1/projects/${domain}/funnels/${made.body.id}?period=30d`, ctx.alice.readKey)).toEqual([
      'step,type,value,visitors,conversion_rate,drop_off,drop_off_rate',
      '1,pageview,/blog/*,10,1,0,',
      '2,event,signup,4,0.4,6,0.6',
      '3,pageview,/welcome*,3,0.3,1,0.25',
    ]);

    // 90d brings in visitor 12's old conversion.
    const wide = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels/${made.body.id}?period=90d`, ctx.alice.readKey);
    expect(wide.body.steps.map((s: { visitors: number }) => s.visitors)).toEqual([11, 5, 4]);
  });

  it('lets one event advance one step only', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    await insertEvents(ctx.h.deps.rowStore, id, [
      makeEvent({ ts: NOW - 10 * MIN, visitor: 1, path: '/p1' }),
      makeEvent({ ts: NOW - 10 * MIN, visitor: 2, path: '/p1' }),
      makeEvent({ ts: NOW - 9 * MIN, visitor: 2, path: '/p2' }),
    ]);
    const made = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/funnels`, ctx.alice.writeKey, {
      name: 'Twice',
      steps: [{ type: 'pageview', value: '/p*' }, { type: 'pageview', value: '/p*' }],
    });
    const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels/${made.body.id}`, ctx.alice.readKey);
    expect(res.body.period).toBe('30d');
    expect(res.body.steps.map((s: { visitors: number }) => s.visitors)).toEqual([2, 1]);
  });

  it('equals the TypeScript reference on random journeys for every period', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice, 'America/St_Johns');
    const r = seededRandom(42);
    const paths = ['/', '/blog/a', '/blog/b', '/shop/item-1', '/shop/item-2', '/cart', '/checkout/done'];
    const names = ['add_to_cart', 'signup', 'purchase'];
    const events: GenEvent[] = [];
    for (let v = 1; v <= 40; v++) {
      for (let s = 0; s < r.int(1, 3); s++) {
        let t = NOW - r.int(0, 120) * DAY + r.int(0, 20_000) * 1000;
        for (let k = 0; k < r.int(1, 8); k++) {
          t += r.int(1, 900) * 1000 + 7;
          const named = r.next() < 0.35;
          events.push(makeEvent({
            ts: t,
            visitor: v,
            session: v * 10 + s,
            kind: named ? r.pick(['custom', 'transaction'] as const) : 'pageview',
            path: r.pick(paths),
            eventName: named ? r.pick(names) : '',
          }));
        }
      }
    }
    await insertEvents(ctx.h.deps.rowStore, id, events);
    const steps: Step[] = [
      { type: 'pageview', value: '/shop/*' },
      { type: 'event', value: 'add_to_cart' },
      { type: 'pageview', value: '/c*' },
      { type: 'event', value: 'purchase' },
    ];
    const made = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/funnels`, ctx.alice.writeKey, { name: 'Shop', steps });
    for (const key of REPORT_PERIODS) {
      const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels/${made.body.id}?period=${key}`, ctx.alice.readKey);
      expect(res.status).toBe(200);
      expect(res.body.steps, key).toEqual(reference(events, steps, Date.parse(res.body.from), Date.parse(res.body.to)));
    }
    const year = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels/${made.body.id}?period=12m`, ctx.alice.readKey);
    expect(year.body.steps[0].visitors).toBeGreaterThan(year.body.steps[3].visitors);
    expect(year.body.steps[2].visitors).toBeGreaterThan(0);
  });

  it('lists and deletes definitions', async () => {
    const { domain } = await newProject(ctx.h, ctx.alice);
    const a = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/funnels`, ctx.alice.writeKey, { name: 'A', steps: FUNNEL });
    const b = await callJson(ctx.h, 'POST', `/api/v1/projects/${domain}/funnels`, ctx.alice.writeKey, { name: ' B ', steps: FUNNEL.slice(0, 2) });
    expect(b.body.name).toBe('B');
    const list = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels`, ctx.alice.readKey);
    expect(list).toEqual({ status: 200, body: { funnels: [a.body, b.body] } });
    expect(await callJson(ctx.h, 'DELETE', `/api/v1/projects/${domain}/funnels/${a.body.id}`, ctx.alice.writeKey)).toEqual({ status: 200, body: { ok: true } });
    expect((await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels`, ctx.alice.readKey)).body.funnels).toEqual([b.body]);
    expect(await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/funnels/${a.body.id}`, ctx.alice.readKey)).toEqual({ status: 404, body: { error: 'Funnel not found' } });
    expect(await callJson(ctx.h, 'DELETE', `/api/v1/projects/${domain}/funnels/${a.body.id}`, ctx.alice.writeKey)).toEqual({ status: 404, body: { error: 'Funnel not found' } });
  });
});

describe('funnels: every refusal', () => {
  it('answers 400, 401, 403 and 404 where they apply', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    await addMember(ctx.h, id, ctx.bob, 'member');
    const base = `/api/v1/projects/${domain}/funnels`;
    const ok = { name: 'Flow', steps: FUNNEL };
    const funnelId = (await callJson(ctx.h, 'POST', base, ctx.alice.writeKey, ok)).body.id;

    expect(await callJson(ctx.h, 'GET', `${base}/${funnelId}?period=1y`, ctx.alice.readKey)).toEqual({
      status: 400,
      body: { error: 'period must be one of: 24h, today, 7d, 30d, 90d, 6m, 12m, this_month, this_week, custom, all' },
    });
    for (const [method, path] of [['GET', base], ['GET', `${base}/${funnelId}`], ['POST', base], ['DELETE', `${base}/${funnelId}`]] as const) {
      expect(await callJson(ctx.h, method, path, undefined, method === 'POST' ? ok : undefined)).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    }
    expect(await callJson(ctx.h, 'POST', base, ctx.alice.readKey, ok)).toEqual({ status: 403, body: { error: 'API key is read-only' } });
    expect(await callJson(ctx.h, 'DELETE', `${base}/${funnelId}`, ctx.alice.readKey)).toEqual({ status: 403, body: { error: 'API key is read-only' } });
    // Members read funnels but cannot manage them.
    expect((await callJson(ctx.h, 'GET', base, ctx.bob.readKey)).status).toBe(200);
    expect((await callJson(ctx.h, 'GET', `${base}/${funnelId}`, ctx.bob.readKey)).status).toBe(200);
    expect(await callJson(ctx.h, 'POST', base, ctx.bob.writeKey, ok)).toEqual({ status: 404, body: { error: 'Project not found' } });
    expect(await callJson(ctx.h, 'DELETE', `${base}/${funnelId}`, ctx.bob.writeKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
    const stranger = await ctx.h.user('eve');
    expect(await callJson(ctx.h, 'GET', base, stranger.readKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
    expect(await callJson(ctx.h, 'GET', `${base}/${funnelId}`, stranger.readKey)).toEqual({ status: 404, body: { error: 'Project not found' } });

    const step = { type: 'pageview', value: '/x' };
    const stepsMessage = 'steps must be an array of 2 to 8 steps';
    const bad: [unknown, string][] = [
      [{ name: 'F', steps: [step] }, stepsMessage],
      [{ name: 'F', steps: Array(9).fill(step) }, stepsMessage],
      [{ name: 'F', steps: 'x' }, stepsMessage],
      [{ name: 'F', steps: [step, { type: 'click', value: 'x' }] }, 'step type must be one of: pageview, event'],
      [{ name: 'F', steps: [step, { type: 'event', value: ' ' }] }, 'step value is required'],
      [{ name: 'F', steps: [step, 'x'] }, 'each step must be an object with type and value'],
      [{ name: '', steps: [step, step] }, 'name is required (1–80 characters)'],
      [{ steps: [step, step] }, 'Body must be a JSON object with name (1–80 characters) and steps'],
    ];
    for (const [body, error] of bad) {
      expect(await callJson(ctx.h, 'POST', base, ctx.alice.writeKey, body), JSON.stringify(body)).toEqual({ status: 400, body: { error } });
    }
    expect((await callJson(ctx.h, 'POST', base, ctx.alice.writeKey, { name: 'Eight', steps: Array(8).fill(step) })).status).toBe(201);
  });
});
