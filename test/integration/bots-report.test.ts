import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { BOT_FILTERS } from '../../src/reports/params.js';
import { GOAL_BOT_PERIODS, resolvePeriod } from '../../src/reports/periods.js';
import { callJson, chTime, csvLines, newProject, seededRandom } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';

const NOW = Date.parse('2026-05-20T21:10:00Z'); // already the 21st in Kathmandu (+05:45)
const DAY = 86_400_000;
const ZONE = 'Asia/Kathmandu';
const ctx = useHarness(['alice', 'bob'], { clock: fixedClock(NOW) });

const BOTS = [
  ['gptbot', 'GPTBot', 'training'],
  ['ccbot', 'CCBot', 'training'],
  ['claudebot', 'ClaudeBot', 'training'],
  ['googlebot', 'Googlebot', 'indexing'],
  ['bingbot', 'Bingbot', 'indexing'],
  ['yandexbot', 'YandexBot', 'indexing'],
  ['perplexitybot', 'PerplexityBot', 'ai_answer'],
  ['oai-searchbot', 'OAI-SearchBot', 'ai_answer'],
  ['chatgpt-user', 'ChatGPT-User', 'ai_answer'],
  ['ahrefsbot', 'AhrefsBot', 'other'],
  ['semrushbot', 'SemrushBot', 'other'],
  ['mj12bot', 'MJ12bot', 'other'],
] as const;

interface Hit { ts: number; slug: string; name: string; category: string; verified: boolean; path: string }

function generate(seed: number): Hit[] {
  const r = seededRandom(seed);
  const hits: Hit[] = [];
  for (let i = 0; i < 900; i++) {
    // Skewed: low bot indexes more often, so ranks differ; some hits land after today or 13 months back.
    const [slug, name, category] = BOTS[Math.min(r.int(0, 11), r.int(0, 11))]!;
    hits.push({
      ts: NOW - r.int(-DAY, 400 * DAY) + r.int(0, 999),
      slug,
      name,
      category,
      verified: r.next() < 0.4,
      path: `/p/${Math.min(r.int(0, 14), r.int(0, 14))}`,
    });
  }
  // Exact day edges in the zone, the last millisecond before and the first of a day.
  const todayStart = resolvePeriod('today', ZONE, NOW).from;
  hits.push({ ts: todayStart - 1, slug: 'gptbot', name: 'GPTBot', category: 'training', verified: true, path: '/edge' });
  hits.push({ ts: todayStart, slug: 'gptbot', name: 'GPTBot', category: 'training', verified: false, path: '/edge' });
  // Now and the millisecond after it: the first counts (from raw hits, as the current quarter hour is not whole), the second is in the future.
  hits.push({ ts: NOW, slug: 'gptbot', name: 'GPTBot', category: 'training', verified: true, path: '/now' });
  hits.push({ ts: NOW + 1, slug: 'gptbot', name: 'GPTBot', category: 'training', verified: true, path: '/future' });
  return hits;
}

const ranked = <T>(entries: [string, T][], count: (v: T) => number) =>
  entries.sort((a, b) => count(b[1]) - count(a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

/** The bots report computed in plain TypeScript. */
function reference(hits: Hit[], key: (typeof GOAL_BOT_PERIODS)[number], filter: string) {
  const p = resolvePeriod(key, ZONE, NOW);
  const inside = hits.filter((x) => x.ts >= p.from && x.ts <= NOW); // periods end now, inclusive
  const totals = { all: inside.length, verified: inside.filter((x) => x.verified).length, ai_answer: 0, indexing: 0, training: 0, other: 0 };
  for (const x of inside) totals[x.category as 'other']++;
  const chosen = inside.filter((x) => filter === 'all' || x.category === filter);
  const series = p.buckets.map((start, i) => {
    const end = p.buckets[i + 1] ?? NOW + 1;
    const day = chosen.filter((x) => x.ts >= start && x.ts < end);
    const byName = new Map<string, number>();
    for (const x of day) byName.set(x.name, (byName.get(x.name) ?? 0) + 1);
    return { date: start, count: day.length, byBot: ranked([...byName], (n) => n).map(([name, count]) => ({ name, count })) };
  });
  const bySlug = new Map<string, { name: string; category: string; count: number; verified: number }>();
  for (const x of chosen) {
    const b = bySlug.get(x.slug) ?? { name: x.name, category: x.category, count: 0, verified: 0 };
    b.count++;
    if (x.verified) b.verified++;
    bySlug.set(x.slug, b);
  }
  const byPath = new Map<string, number>();
  for (const x of chosen) byPath.set(x.path, (byPath.get(x.path) ?? 0) + 1);
  return {
    period: key,
    from: new Date(p.from).toISOString(),
    to: new Date(NOW).toISOString(),
    filter,
    data: {
      totals,
      series,
      topBots: ranked([...bySlug], (b) => b.count).slice(0, 10).map(([slug, b]) => ({ slug, ...b })),
      topPages: ranked([...byPath], (n) => n).slice(0, 10).map(([path, count]) => ({ path, count })),
    },
  };
}

describe('bots report', () => {
  it('equals the TypeScript computation for every period and filter', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice, ZONE);
    const hits = generate(3);
    await ctx.h.deps.rowStore.insert(
      'bot_hits',
      hits.map((x) => ({
        project_id: id, ts: chTime(x.ts), bot_slug: x.slug, bot_name: x.name, category: x.category,
        verified: x.verified ? 1 : 0, path: x.path, status: 200, user_agent: `${x.name}/1.0`,
      })),
    );
    for (const key of GOAL_BOT_PERIODS) {
      for (const filter of BOT_FILTERS) {
        const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/bots?period=${key}&filter=${filter}`, ctx.alice.readKey);
        expect(res.status).toBe(200);
        expect(res.body, `${key} ${filter}`).toEqual(reference(hits, key, filter));
      }
    }
    // The data really exercises the rules: zero-filled days, a cut top list, the filter narrowing.
    const year = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/bots?period=12m&filter=all`, ctx.alice.session);
    expect(year.body.data.series.some((d: { count: number; byBot: unknown[] }) => d.count === 0 && d.byBot.length === 0)).toBe(true);
    expect(year.body.data.series.every((d: { date: unknown }) => typeof d.date === 'number')).toBe(true);
    expect(year.body.data.topBots).toHaveLength(10);
    expect(year.body.data.topPages).toHaveLength(10);
    expect(year.body.data.totals.verified).toBeGreaterThan(0);
    const training = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/bots?period=12m&filter=training`, ctx.alice.readKey);
    expect(training.body.data.topBots.map((b: { category: string }) => b.category)).toEqual(['training', 'training', 'training']);
    expect(training.body.data.totals).toEqual(year.body.data.totals);
    const csv = await csvLines(ctx.h, `/api/v1/projects/${domain}/bots?period=12m&filter=training`, ctx.alice.readKey);
    expect(csv).toEqual([
      'slug,name,category,hits,verified_hits',
      ...training.body.data.topBots.map((b: Record<string, unknown>) => `${b.slug},${b.name},training,${b.count},${b.verified}`),
    ]);
    const today = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/bots?period=today`, ctx.alice.readKey);
    expect(today.body.data.series).toHaveLength(1);
    expect(today.body.data.topPages.find((p: { path: string }) => p.path === '/edge')).toEqual({ path: '/edge', count: 1 });
  });

  it('defaults to 7d and all, and answers an empty project with zeros', async () => {
    const { domain } = await newProject(ctx.h, ctx.alice, ZONE);
    const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/bots`, ctx.alice.writeKey);
    expect(res.status).toBe(200);
    expect(res.body.period).toBe('7d');
    expect(res.body.filter).toBe('all');
    expect(res.body.data.totals).toEqual({ all: 0, verified: 0, ai_answer: 0, indexing: 0, training: 0, other: 0 });
    expect(res.body.data.series).toHaveLength(7);
    expect(res.body.data.series.every((d: { count: number }) => d.count === 0)).toBe(true);
    expect(res.body.data.topBots).toEqual([]);
    expect(res.body.data.topPages).toEqual([]);
  });

  it('refuses bad parameters, missing credentials and foreign projects', async () => {
    const { domain } = await newProject(ctx.h, ctx.alice);
    const base = `/api/v1/projects/${domain}/bots`;
    expect(await callJson(ctx.h, 'GET', `${base}?filter=spam`, ctx.alice.readKey)).toEqual({
      status: 400,
      body: { error: 'filter must be one of: all, ai_answer, indexing, training, other' },
    });
    expect(await callJson(ctx.h, 'GET', `${base}?period=90d`, ctx.alice.readKey)).toEqual({
      status: 400,
      body: { error: 'period must be one of: today, 7d, 30d, 6m, 12m' },
    });
    expect(await callJson(ctx.h, 'GET', base)).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    expect(await callJson(ctx.h, 'GET', base, 'sl_notakey')).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    expect(await callJson(ctx.h, 'GET', base, ctx.bob.readKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
  });
});
