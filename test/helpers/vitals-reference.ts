import * as v from 'valibot';
import { expect } from 'vitest';
import type { Clock } from '../../src/adapters/clock.js';
import { getProject } from '../../src/projects/store.js';
import { findReport } from '../../src/reports/registry.js';
import type { VitalsMark } from '../../src/reports/vitals-mark.js';
import type { Harness } from './harness.js';
import { chTime, seededRandom } from './report-fixtures.js';

/** Vitals events and the performance report's answer over them, computed in TypeScript (README "Reports"). */
export const METRICS = ['lcp', 'inp', 'cls', 'fcp', 'ttfb'] as const;
export type Metric = (typeof METRICS)[number];
export type Vitals = { ts: number; path: string } & Record<Metric, number | null>;
const LIMITS: Record<Metric, [number, number]> = { lcp: [2500, 4000], inp: [200, 500], cls: [0.1, 0.25], fcp: [1800, 3000], ttfb: [800, 1800] };
const DECIMALS: Record<Metric, number> = { lcp: 1, inp: 1, cls: 4, fcp: 1, ttfb: 1 };
const DAY = 86_400_000;

/** Inserts vitals events into `events` (the view copies them into `vitals`). */
export async function insertVitals(h: Harness, projectId: string, rows: Vitals[], table: 'events' | 'vitals' = 'events') {
  await h.deps.rowStore.insert(
    table,
    rows.map(({ ts, ...rest }) => ({ project_id: projectId, ts: chTime(ts), kind: 'vitals', visitor_id: 1, session_id: 1, ...rest })),
  );
}

/**
 * 700 vitals events over the 100 days before `now`, with values exact in Float32 (whole ms; CLS
 * in 1/256 steps) so sums are exact and the only definitions under test are p75, average and the ratings.
 */
export function generateVitals(seed: number, now: number): Vitals[] {
  const r = seededRandom(seed);
  const maybe = (make: () => number) => (r.next() < 0.25 ? null : make());
  return Array.from({ length: 700 }, (_, i) => ({
    ts: now - r.int(0, 100) * DAY - r.int(0, 80_000) * 1000 - i,
    path: `/page-${Math.min(r.int(0, 13), r.int(0, 13))}`,
    lcp: maybe(() => r.int(300, 6000)),
    inp: maybe(() => r.int(8, 900)),
    cls: maybe(() => r.int(0, 100) / 256),
    fcp: maybe(() => r.int(200, 4000)),
    ttfb: maybe(() => r.int(20, 2500)),
  }));
}

const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;

/** p75 as the sample at index floor(0.75·n) of the sorted values (ClickHouse quantileExact), mean, count, rating. */
function metricOf(rows: Vitals[], m: Metric) {
  const values = rows.map((r) => r[m]).filter((x): x is number => x !== null).sort((a, b) => a - b);
  if (values.length === 0) return { p75: null, avg: null, samples: 0, rating: null };
  const p75 = values[Math.floor(0.75 * values.length)]!;
  const avg = values.reduce((s, x) => s + x, 0) / values.length;
  const [good, poor] = LIMITS[m];
  return { p75: round(p75, DECIMALS[m]), avg: round(avg, DECIMALS[m]), samples: values.length, rating: p75 <= good ? 'good' : p75 <= poor ? 'needs-improvement' : 'poor' };
}

const metricsOf = (rows: Vitals[]) => Object.fromEntries(METRICS.map((m) => [m, metricOf(rows, m)]));

/** The performance answer (without its period fields) over the rows stamped in [from, to). */
export function performanceReference(rows: Vitals[], from: number, to: number) {
  const inside = rows.filter((r) => r.ts >= from && r.ts < to);
  const byPath = new Map<string, Vitals[]>();
  for (const r of inside) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  const pages = [...byPath]
    .sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))
    .slice(0, 10)
    .map(([path, list]) => ({ path, samples: list.length, ...metricsOf(list) }));
  return { overall: metricsOf(inside), pages };
}

/** Replaces the stored marks of migration 0028 (none: an empty list). */
export async function setVitalsMarks(h: Harness, marks: number[]) {
  await h.deps.clickhouse.command({ query: 'TRUNCATE TABLE vitals_since' });
  if (marks.length) await h.deps.rowStore.insert('vitals_since', marks.map((ms) => ({ since: chTime(ms) })));
}

/**
 * Runs the performance report of a project for each of `queries` computed (no answer cache), with
 * the vitals mark kept by `vitalsMark` or, without it, read in each statement, and expects each
 * answer to equal the reference over `rows` in its own range.
 */
export async function expectPerformance(
  h: Harness,
  projectId: string,
  rows: Vitals[],
  opts: { vitalsMark: VitalsMark | undefined; clock?: Clock; queries: Record<string, string>[] },
) {
  const report = findReport('performance')!;
  const project = (await getProject(h.deps.redis, projectId))!;
  const at = { deps: { ...h.deps, ...(opts.clock && { clock: opts.clock }), vitalsMark: opts.vitalsMark, answers: undefined }, project, role: 'owner' as const };
  for (const query of opts.queries) {
    const { period, from, to, ...rest } = (await report.run(at, v.parse(report.query, query))) as Record<string, unknown>;
    expect(period, JSON.stringify(query)).toBe(query.period);
    expect(rest, `${JSON.stringify(query)}, mark ${opts.vitalsMark ? 'kept' : 'read'}`).toEqual(performanceReference(rows, Date.parse(String(from)), Date.parse(String(to))));
  }
}
