import { describe, expect, it } from 'vitest';
import { resolvePeriod } from '../../src/reports/periods.js';
import type { ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { dailyRowsFitBuckets, periodParams, queryJson, rawParams } from '../../src/reports/query.js';
import { BOT_ROWS, rollupRows, withoutEdgeRows, withoutRawSlices } from '../../src/reports/sql/window.js';

const at = (iso: string) => Date.parse(iso);

describe('periodParams: exact bounds for raw events, 15-minute edges for rollups, whole UTC days for daily rows', () => {
  it('30d in UTC: the period ends now; rollups up to the current quarter hour, daily rows up to today', () => {
    const p = periodParams('p', resolvePeriod('30d', 'UTC', at('2026-03-15T10:20:00Z')));
    expect(p).toMatchObject({
      from: '2026-02-14 00:00:00.000', to: '2026-03-15 10:20:00.001',
      rollupFrom: '2026-02-14 00:00:00', rollupTo: '2026-03-15 10:15:00',
      dayFrom: '2026-02-14 00:00:00', dayTo: '2026-03-15 00:00:00',
    });
  });

  it('7d in Asia/Kolkata (+5:30): the partial UTC days at both edges are left to the 15-minute rows', () => {
    const p = periodParams('p', resolvePeriod('7d', 'Asia/Kolkata', at('2026-03-15T10:20:00Z')));
    expect(p).toMatchObject({ from: '2026-03-08 18:30:00.000', rollupTo: '2026-03-15 10:15:00', dayFrom: '2026-03-09 00:00:00', dayTo: '2026-03-15 00:00:00' });
  });

  it('24h in the middle of a quarter hour: raw slices at both edges; no whole UTC day → only 15-minute rows', () => {
    const day = periodParams('p', resolvePeriod('24h', 'UTC', at('2026-03-15T10:20:00Z')));
    expect(day).toMatchObject({
      from: '2026-03-14 10:20:00.000', to: '2026-03-15 10:20:00.001',
      rollupFrom: '2026-03-14 10:30:00', rollupTo: '2026-03-15 10:15:00',
      dayFrom: '2026-03-15 10:15:00', dayTo: '2026-03-15 10:15:00',
      hourBase: '2026-03-14 10:00:00', lastHour: 24,
    });
    const off = periodParams('p', resolvePeriod('30d', 'UTC', at('2026-03-15T10:20:00Z')), { daily: false });
    expect(off).toMatchObject({ dayFrom: '2026-03-15 10:15:00', dayTo: '2026-03-15 10:15:00' });
  });

  it('rollupEnd (no rows after now): rollups up to the next UTC midnight, daily rows through today, no raw slice at the end', () => {
    const p = periodParams('p', resolvePeriod('30d', 'UTC', at('2026-03-15T10:20:00Z')), { rollupEnd: at('2026-03-16T00:00:00Z') });
    expect(p).toMatchObject({ to: '2026-03-15 10:20:00.001', rollupTo: '2026-03-16 00:00:00', dayTo: '2026-03-16 00:00:00' });
  });

  it('one millisecond before a quarter hour: the rollups hold the whole last quarter, no raw slice', () => {
    const p = periodParams('p', resolvePeriod('today', 'UTC', at('2026-03-15T10:14:59.999Z')));
    expect(p).toMatchObject({ to: '2026-03-15 10:15:00.000', rollupTo: '2026-03-15 10:15:00' });
  });
});

describe('rawParams: raw reads of a period ending now stop at the next UTC midnight unless rows are stored after now', () => {
  const now = at('2026-03-15T10:20:00Z');
  const period = resolvePeriod('30d', 'UTC', now);
  /** A narrow fake of the engine: answers the check with the latest row of the day (`latest`, null for none), any other read with the readTo it was given. */
  const engine = (latest: number | null) => {
    const reads: Record<string, unknown>[] = [];
    const days: unknown[] = [];
    const client = {
      query: async ({ query, query_params }: { query: string; query_params: Record<string, unknown> }) => ({
        json: async () =>
          query.includes('AS latest')
            ? (days.push(query_params.day), [{ latest: String(latest ?? 0), n: latest === null ? '0' : '3' }])
            : (reads.push(query_params), [{ readTo: query_params.readTo }]),
      }),
    } as unknown as ClickHouseClient;
    return { client, reads, days };
  };
  const noEngine = { query: () => { throw new Error('no read expected'); } } as unknown as ClickHouseClient;

  it('nothing stored after now (known to the answer cache): the next UTC midnight, without a check', async () => {
    const latestRow = { projectId: 'p', at: Promise.resolve(now - 1000) };
    const p = await rawParams({ clickhouse: noEngine, clock: fixedClock(now), latestRow }, 'p', period);
    expect(p).toMatchObject({ from: '2026-02-14 00:00:00.000', to: '2026-03-15 10:20:00.001', readTo: '2026-03-16 00:00:00.000' });
    // The same all day: a later clock read gives the same bounds.
    const later = resolvePeriod('30d', 'UTC', now + 3_600_000);
    const q = await rawParams({ clickhouse: noEngine, clock: fixedClock(now + 3_600_000), latestRow: { ...latestRow, at: Promise.resolve(now) } }, 'p', later);
    expect(q).toMatchObject({ from: p.from, readTo: p.readTo });
  });

  it('the answer cache still reading its latest row: the parameters at once, the read waiting only to learn whether to read again', async () => {
    let arrive = (_: number) => {};
    const latestRow = { projectId: 'p', at: new Promise<number>((r) => (arrive = r)) };
    const { client, reads } = engine(null);
    const p = await rawParams({ clickhouse: client, clock: fixedClock(now), latestRow }, 'p', period);
    expect(p).toMatchObject({ readTo: '2026-03-16 00:00:00.000' });
    const answer = queryJson({ clickhouse: client }, 'SELECT 1', p);
    await new Promise((r) => setTimeout(r, 10));
    expect(reads).toHaveLength(1);
    arrive(now + 5);
    expect(await answer).toEqual([{ readTo: '2026-03-15 10:20:00.001' }]);
  });

  it('a row known after now: the exact end', async () => {
    const latestRow = { projectId: 'p', at: Promise.resolve(now + 60_000) };
    const { client, reads } = engine(now + 1);
    const p = await rawParams({ clickhouse: client, clock: fixedClock(now), latestRow }, 'p', period);
    expect(await queryJson({ clickhouse: client }, 'SELECT 1', p)).toEqual([{ readTo: '2026-03-15 10:20:00.001' }]);
    expect(reads.at(-1)).toMatchObject({ readTo: '2026-03-15 10:20:00.001' });
  });

  it('unknown: read up to midnight beside the check, and again with the exact end only when it finds rows', async () => {
    for (const latest of [null, now - 60_000, now]) {
      const before = engine(latest);
      const p = await rawParams({ clickhouse: before.client, clock: fixedClock(now) }, 'p', period);
      expect(await queryJson({ clickhouse: before.client }, 'SELECT 1', { ...p, limit: 5 }), `latest ${latest}`).toEqual([{ readTo: '2026-03-16 00:00:00.000' }]);
      expect(before.reads).toHaveLength(1);
      // The check asks for now's UTC day, the same all day.
      expect(before.days).toEqual(['2026-03-15 00:00:00.000']);
    }
    for (const latest of [now + 1, now + 3_600_000]) {
      const after = engine(latest);
      const q = await rawParams({ clickhouse: after.client, clock: fixedClock(now) }, 'p', period);
      expect(await queryJson({ clickhouse: after.client }, 'SELECT 1', { ...q, limit: 5 })).toEqual([{ readTo: '2026-03-15 10:20:00.001' }]);
      expect(after.reads.map((r) => [r.readTo, r.limit])).toEqual([['2026-03-16 00:00:00.000', 5], ['2026-03-15 10:20:00.001', 5]]);
    }
  });

  it('a period that ended before now (a past range, a comparison): its exact end, no check', async () => {
    const p = await rawParams({ clickhouse: noEngine, clock: fixedClock(now + 3_600_000) }, 'p', period);
    expect(p).toMatchObject({ to: '2026-03-15 10:20:00.001', readTo: '2026-03-15 10:20:00.001' });
  });
});

describe('resolvePeriod: periods end now', () => {
  const now = at('2026-03-15T10:20:00Z');
  it('day periods have a bucket per day up to today, none after', () => {
    expect(resolvePeriod('this_month', 'UTC', now).buckets).toHaveLength(15);
    expect(resolvePeriod('7d', 'UTC', now).buckets).toHaveLength(7);
    const year = resolvePeriod('12m', 'UTC', now);
    expect(new Date(year.buckets[0]!).toISOString()).toBe('2025-04-01T00:00:00.000Z');
    expect(new Date(year.buckets.at(-1)!).toISOString()).toBe('2026-03-15T00:00:00.000Z');
    expect(resolvePeriod('this_week', 'UTC', now).buckets).toHaveLength(1); // the 15th is a Sunday
  });
  it('24h: 25 clock-hour buckets off the hour, 24 on it; +5:30 hours start at :30 UTC', () => {
    expect(resolvePeriod('24h', 'UTC', now).buckets).toHaveLength(25);
    expect(resolvePeriod('24h', 'UTC', at('2026-03-15T10:00:00Z')).buckets).toHaveLength(24);
    const kolkata = resolvePeriod('24h', 'Asia/Kolkata', now);
    expect(kolkata.buckets).toHaveLength(25);
    expect(new Date(kolkata.buckets[0]!).toISOString()).toBe('2026-03-14T09:30:00.000Z');
    expect(resolvePeriod('24h', 'Asia/Kolkata', at('2026-03-15T10:30:00Z')).buckets).toHaveLength(24);
  });
});

describe('dailyRowsFitBuckets', () => {
  const now = at('2026-03-15T10:20:00Z');
  it('holds for day buckets that are UTC days, including a zone at offset 0 outside DST', () => {
    expect(dailyRowsFitBuckets(resolvePeriod('30d', 'UTC', now))).toBe(true);
    expect(dailyRowsFitBuckets(resolvePeriod('7d', 'Europe/London', now))).toBe(true);
    expect(dailyRowsFitBuckets(resolvePeriod('this_month', 'Asia/Kolkata', now))).toBe(true);
  });
  it('fails for hour buckets, offset zones, and a period crossing a DST change', () => {
    expect(dailyRowsFitBuckets(resolvePeriod('24h', 'UTC', now))).toBe(false);
    expect(dailyRowsFitBuckets(resolvePeriod('30d', 'Asia/Kolkata', now))).toBe(false);
    expect(dailyRowsFitBuckets(resolvePeriod('12m', 'Europe/London', now))).toBe(false);
  });
});

describe('withoutRawSlices', () => {
  it('drops exactly the raw-slice branch of the rollup rows, for every family and the bot rows', () => {
    for (const family of ['stats', 'pages', 'referrers', 'countries', 'cities', 'tech', 'custom_events'] as const) {
      const sql = `SELECT count() FROM ${rollupRows(family)}`;
      expect(sql).toContain('FROM events');
      const cut = withoutRawSlices(sql);
      expect(cut).not.toContain('FROM events');
      expect(cut).toContain(`FROM ${family}_1d`);
      expect(cut).toContain(`FROM ${family}_15m`);
      expect(cut.trim().endsWith(')')).toBe(true);
    }
    expect(withoutRawSlices(BOT_ROWS)).not.toContain('bot_hits');
    expect(withoutRawSlices(BOT_ROWS)).toContain('FROM bots_15m');
  });

  it('withoutEdgeRows drops exactly the 15-minute branch, alone or after the raw slices', () => {
    for (const family of ['stats', 'pages', 'referrers', 'countries', 'cities', 'tech', 'custom_events'] as const) {
      const sql = `SELECT count() FROM ${rollupRows(family)}`;
      for (const cut of [withoutEdgeRows(sql), withoutEdgeRows(withoutRawSlices(sql))]) {
        expect(cut).not.toContain(`FROM ${family}_15m`);
        expect(cut).toContain(`FROM ${family}_1d`);
        expect(cut.match(/UNION ALL/g)?.length ?? 0).toBe(cut.includes('FROM events') ? 1 : 0);
        expect(cut.trim().endsWith(')')).toBe(true);
      }
    }
    expect(withoutEdgeRows(BOT_ROWS)).toBe(BOT_ROWS);
  });
});
