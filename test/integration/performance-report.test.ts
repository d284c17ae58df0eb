import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { VitalsMark } from '../../src/reports/vitals-mark.js';
import { REPORT_PERIODS } from '../../src/reports/periods.js';
import { callJson, csvLines, newProject } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';
import { expectPerformance, generateVitals, insertVitals, METRICS, performanceReference, setVitalsMarks, type Metric, type Vitals } from '../helpers/vitals-reference.js';

const NOW = Date.parse('2026-05-20T09:30:00Z');
const DAY = 86_400_000;
const ctx = useHarness(['alice', 'bob'], { clock: fixedClock(NOW) });

/** The one number a query answers as `n`. */
const scalar = async (query: string, params: Record<string, unknown> = {}) =>
  Number(((await (await ctx.h.deps.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' })).json()) as { n: string }[])[0]!.n);

describe('performance report', () => {
  it('equals a TypeScript computation of p75, average, samples and rating for every period', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice, 'Pacific/Chatham');
    const rows = generateVitals(5, NOW);
    await insertVitals(ctx.h, id, rows);
    for (const key of REPORT_PERIODS) {
      const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/performance?period=${key}`, ctx.alice.readKey);
      expect(res.status).toBe(200);
      const { period, from, to, ...rest } = res.body;
      expect(period).toBe(key);
      expect(rest, key).toEqual(performanceReference(rows, Date.parse(from), Date.parse(to)));
    }
    const quarter = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/performance?period=90d`, ctx.alice.readKey);
    expect(quarter.body.pages).toHaveLength(10);
    const ratings = new Set(quarter.body.pages.flatMap((p: Record<Metric, { rating: string }>) => METRICS.map((m) => p[m].rating)));
    expect(ratings.size).toBeGreaterThan(1);
  });

  it('reads vitals stamped before the mark of migration 0028 from events and the rest from the vitals table', async () => {
    // The mark of an install that stored vitals before upgrading (a new one's is 0: all from the table),
    // set for this test and put back after it.
    const marks = (await (await ctx.h.deps.clickhouse.query({ query: 'SELECT toUnixTimestamp64Milli(since) AS ms FROM vitals_since', format: 'JSONEachRow' })).json()) as { ms: string }[];
    const since = Date.parse('2026-03-01T12:34:56.789Z');
    await setVitalsMarks(ctx.h, [since]);
    try {
      await splitAtTheMark(since);
    } finally {
      await setVitalsMarks(ctx.h, marks.map((m) => Number(m.ms)));
    }
  });

  async function splitAtTheMark(since: number) {
    // A clock 10 days past the mark: 30d and 90d hold vitals from both sides of it, 7d from the table alone.
    const later = since + 10 * DAY;
    const { id } = await newProject(ctx.h, ctx.alice, 'Asia/Kolkata');
    const rows = generateVitals(7, later);
    await insertVitals(ctx.h, id, rows);
    const before = rows.filter((r) => r.ts < since).length;
    expect(before).toBeGreaterThan(100);
    expect(rows.length - before).toBeGreaterThan(50);
    // Rows stored before the migration are in events alone; rows since the mark are read from the
    // table alone: take each out of the other place, so only a read split at the mark answers all.
    const sync = { mutations_sync: '2' } as const;
    await ctx.h.deps.clickhouse.command({ query: 'ALTER TABLE vitals DELETE WHERE project_id = {id:String} AND ts < fromUnixTimestamp64Milli({since:Int64})', query_params: { id, since }, clickhouse_settings: sync });
    await ctx.h.deps.clickhouse.command({ query: "ALTER TABLE events DELETE WHERE project_id = {id:String} AND kind = 'vitals' AND ts >= fromUnixTimestamp64Milli({since:Int64})", query_params: { id, since }, clickhouse_settings: sync });
    expect(await scalar('SELECT count() AS n FROM vitals WHERE project_id = {id:String}', { id })).toBe(rows.length - before);
    expect(await scalar("SELECT count() AS n FROM events WHERE project_id = {id:String} AND kind = 'vitals'", { id })).toBe(before);

    // The mark read in each statement, and read once by the process (then bound, or left out where the period starts after it).
    const periods = ['7d', '30d', '90d', 'today', '24h'].map((period) => ({ period }));
    for (const vitalsMark of [undefined, new VitalsMark()]) {
      await expectPerformance(ctx.h, id, rows, { vitalsMark, clock: fixedClock(later), queries: periods });
      const onPage = rows.filter((r) => r.path === '/page-1');
      await expectPerformance(ctx.h, id, onPage, { vitalsMark, clock: fixedClock(later), queries: [{ period: '90d', filters: 'page==/page-1' }] });
    }
  }

  it('marks 0 on an install that stored no vitals before migration 0028, so every vitals row is read from the table', async () => {
    expect(await new VitalsMark().since(ctx.h.deps.clickhouse)).toBe(0);
  });

  it('rates p75 by the web.dev thresholds, boundaries included, and answers nulls without samples', async () => {
    const { domain, id } = await newProject(ctx.h, ctx.alice);
    const at = NOW - 3_600_000;
    const only = (path: string, lcp: number, cls: number | null): Vitals => ({ ts: at, path, lcp, inp: null, cls, fcp: null, ttfb: null });
    await insertVitals(ctx.h, id, [only('/a', 2500, 0.09999999), only('/b', 4000, 0.25), only('/c', 4000.5, 0.2501), only('/c', 1, null)]);
    const res = await callJson(ctx.h, 'GET', `/api/v1/projects/${domain}/performance?period=today`, ctx.alice.readKey);
    const pick = (path: string) => res.body.pages.find((p: { path: string }) => p.path === path);
    expect(pick('/a').lcp).toEqual({ p75: 2500, avg: 2500, samples: 1, rating: 'good' });
    expect(pick('/a').cls.rating).toBe('good');
    expect(pick('/b').lcp.rating).toBe('needs-improvement');
    expect(pick('/b').cls.rating).toBe('needs-improvement');
    // Two LCP samples [1, 4000.5]: index floor(1.5) = 1 → 4000.5, poor.
    expect(pick('/c').lcp).toEqual({ p75: 4000.5, avg: 2000.8, samples: 2, rating: 'poor' });
    expect(pick('/c').cls).toMatchObject({ samples: 1, rating: 'poor' });
    expect(pick('/c').inp).toEqual({ p75: null, avg: null, samples: 0, rating: null });
    expect(res.body.pages.map((p: { path: string; samples: number }) => [p.path, p.samples])).toEqual([['/c', 2], ['/a', 1], ['/b', 1]]);

    const csv = await csvLines(ctx.h, `/api/v1/projects/${domain}/performance?period=today`, ctx.alice.readKey);
    expect(csv[0]).toBe('scope,metric,p75,avg,samples,rating');
    expect(csv).toContain('(overall),lcp,4000.5,2625.4,4,poor'); // sorted [1, 2500, 4000, 4000.5], index 3
    expect(csv).toContain('/c,inp,,,0,');
    expect(csv).toHaveLength(1 + 5 * 4);

    const empty = await newProject(ctx.h, ctx.alice);
    const none = await callJson(ctx.h, 'GET', `/api/v1/projects/${empty.domain}/performance`, ctx.alice.readKey);
    expect(none.body.period).toBe('30d');
    expect(none.body.pages).toEqual([]);
    expect(none.body.overall.ttfb).toEqual({ p75: null, avg: null, samples: 0, rating: null });
  });

  it('refuses bad periods, missing credentials and foreign projects', async () => {
    const { domain } = await newProject(ctx.h, ctx.alice);
    const base = `/api/v1/projects/${domain}/performance`;
    expect(await callJson(ctx.h, 'GET', `${base}?period=1y`, ctx.alice.readKey)).toEqual({
      status: 400,
      body: { error: 'period must be one of: 24h, today, 7d, 30d, 90d, 6m, 12m, this_month, this_week, custom, all' },
    });
    expect(await callJson(ctx.h, 'GET', base)).toEqual({ status: 401, body: { error: 'Invalid or missing API key' } });
    expect(await callJson(ctx.h, 'GET', base, ctx.bob.readKey)).toEqual({ status: 404, body: { error: 'Project not found' } });
  });
});
