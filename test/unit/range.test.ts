import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { bucketKeys } from '../../src/reports/buckets.js';
import { rangeBody, rangeQuery } from '../../src/reports/params.js';
import { resolveAllTime, resolveCustomRange, resolveRange } from '../../src/reports/range.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const NOW = at('2026-03-15T10:20:00Z');

/** The 400 message a resolver throws, or null. */
function rejection(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(400);
    return (e as ApiError).message;
  }
}

describe('resolveCustomRange: whole local days, both dates counted', () => {
  it('Asia/Kolkata (+5:30): days start at 18:30 UTC the evening before; a past range ends at its last millisecond', () => {
    const p = resolveCustomRange('2026-03-01', '2026-03-03', 'Asia/Kolkata', NOW);
    expect([iso(p.from), iso(p.now), iso(p.to)]).toEqual(['2026-02-28T18:30:00.000Z', '2026-03-03T18:29:59.999Z', '2026-03-03T18:30:00.000Z']);
    expect(p.buckets.map(iso)).toEqual(['2026-02-28T18:30:00.000Z', '2026-03-01T18:30:00.000Z', '2026-03-02T18:30:00.000Z']);
    expect(p).toMatchObject({ key: 'custom', granularity: 'day', bucketTimeZone: 'Asia/Kolkata' });
    expect(bucketKeys(p)).toEqual(['2026-03-01', '2026-03-02', '2026-03-03']);
  });

  it('America/St_Johns (−3:30 in winter): days start at 03:30 UTC', () => {
    const p = resolveCustomRange('2026-01-10', '2026-01-11', 'America/St_Johns', NOW);
    expect([iso(p.from), iso(p.to)]).toEqual(['2026-01-10T03:30:00.000Z', '2026-01-12T03:30:00.000Z']);
    expect(p.buckets.map(iso)).toEqual(['2026-01-10T03:30:00.000Z', '2026-01-11T03:30:00.000Z']);
  });

  it('Europe/Berlin spring forward (29 March 2026): the 23-hour day is one bucket', () => {
    const p = resolveCustomRange('2026-03-28', '2026-03-30', 'Europe/Berlin', NOW + 30 * 86_400_000);
    expect(p.buckets.map(iso)).toEqual(['2026-03-27T23:00:00.000Z', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    expect(iso(p.to)).toBe('2026-03-30T22:00:00.000Z');
    expect((p.buckets[2]! - p.buckets[1]!) / 3_600_000).toBe(23);
  });

  it('Europe/Berlin fall back (25 October 2026): the 25-hour day is one bucket', () => {
    const p = resolveCustomRange('2026-10-24', '2026-10-26', 'Europe/Berlin', at('2026-11-20T12:00:00Z'));
    expect(p.buckets.map(iso)).toEqual(['2026-10-23T22:00:00.000Z', '2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z']);
    expect(iso(p.to)).toBe('2026-10-26T23:00:00.000Z');
    expect((p.buckets[2]! - p.buckets[1]!) / 3_600_000).toBe(25);
  });

  it('America/New_York spring forward (8 March) and fall back (1 November 2026)', () => {
    const spring = resolveCustomRange('2026-03-07', '2026-03-09', 'America/New_York', NOW);
    expect(spring.buckets.map(iso)).toEqual(['2026-03-07T05:00:00.000Z', '2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
    expect(iso(spring.to)).toBe('2026-03-10T04:00:00.000Z');
    const fall = resolveCustomRange('2026-10-31', '2026-11-02', 'America/New_York', at('2026-11-20T12:00:00Z'));
    expect(fall.buckets.map(iso)).toEqual(['2026-10-31T04:00:00.000Z', '2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z']);
    expect(iso(fall.to)).toBe('2026-11-03T05:00:00.000Z');
  });

  it('a range ending today ends at now; a `to` after today is clamped to now', () => {
    for (const to of ['2026-03-15', '2026-03-20']) {
      const p = resolveCustomRange('2026-03-10', to, 'UTC', NOW);
      expect([iso(p.from), p.now, p.to]).toEqual(['2026-03-10T00:00:00.000Z', NOW, NOW + 1]);
      expect(p.buckets.map(iso)).toEqual(['10', '11', '12', '13', '14', '15'].map((d) => `2026-03-${d}T00:00:00.000Z`));
    }
  });

  it('"today" follows the project zone: at 01:30 in Kolkata the 15th has begun there, not in UTC', () => {
    const now = at('2026-03-14T20:00:00Z');
    const p = resolveCustomRange('2026-03-15', '2026-03-15', 'Asia/Kolkata', now);
    expect([iso(p.from), p.now]).toEqual(['2026-03-14T18:30:00.000Z', now]);
    expect(rejection(() => resolveCustomRange('2026-03-15', '2026-03-15', 'UTC', now))).toBe("from must not be after today (2026-03-14 in the project's time zone)");
  });

  it('at most 1827 days; to before from, malformed dates rejected', () => {
    expect(resolveCustomRange('2021-01-01', '2026-01-01', 'UTC', NOW).buckets).toHaveLength(1827);
    expect(rejection(() => resolveCustomRange('2020-12-31', '2026-01-01', 'UTC', NOW))).toBe('a custom range may be at most 1827 days long');
    expect(rejection(() => resolveCustomRange('2026-03-10', '2026-03-09', 'UTC', NOW))).toBe('to must not be before from');
    expect(rejection(() => resolveCustomRange('2026-02-30', '2026-03-09', 'UTC', NOW))).toBe('from must be a date (YYYY-MM-DD)');
    expect(rejection(() => resolveCustomRange('2026-03-01', '2026-3-9', 'UTC', NOW))).toBe('to must be a date (YYYY-MM-DD)');
  });
});

describe('resolveAllTime', () => {
  it("from the start of the local day of the first event, to now", () => {
    // 23:30 UTC on the 10th is 00:30 on the 11th in Berlin (CET).
    const p = resolveAllTime({ firstEventAt: at('2026-03-10T23:30:00Z'), createdAt: at('2026-01-01T00:00:00Z') }, 'Europe/Berlin', NOW);
    expect([iso(p.from), p.now, p.to, p.key]).toEqual(['2026-03-10T23:00:00.000Z', NOW, NOW + 1, 'all']);
    expect(bucketKeys(p)).toEqual(['2026-03-11', '2026-03-12', '2026-03-13', '2026-03-14', '2026-03-15']);
  });
  it('without events, from the project creation day; a creation after now counts as today', () => {
    const p = resolveAllTime({ firstEventAt: null, createdAt: at('2026-03-14T12:00:00Z') }, 'UTC', NOW);
    expect([iso(p.from), p.buckets.length]).toEqual(['2026-03-14T00:00:00.000Z', 2]);
    const later = resolveAllTime({ firstEventAt: null, createdAt: NOW + 3_600_000 }, 'UTC', NOW);
    expect([iso(later.from), later.buckets.length]).toEqual(['2026-03-15T00:00:00.000Z', 1]);
  });
});

describe('resolveRange', () => {
  it('dispatches presets, custom and all; refuses dates without custom and custom without dates', () => {
    expect(resolveRange({ period: '7d' }, 'UTC', NOW).buckets).toHaveLength(7);
    expect(resolveRange({ period: 'custom', from: '2026-03-01', to: '2026-03-02' }, 'UTC', NOW).buckets).toHaveLength(2);
    expect(resolveRange({ period: 'all' }, 'UTC', NOW, { firstEventAt: at('2026-03-01T05:00:00Z'), createdAt: 0 }).buckets).toHaveLength(15);
    expect(rejection(() => resolveRange({ period: 'custom', from: '2026-03-01' }, 'UTC', NOW))).toBe('from and to (YYYY-MM-DD) are required with period=custom');
    expect(rejection(() => resolveRange({ period: '7d', to: '2026-03-01' }, 'UTC', NOW))).toBe('from and to are only allowed with period=custom');
    expect(() => resolveRange({ period: 'all' }, 'UTC', NOW)).toThrow(/project span/);
  });
});

describe('rangeQuery / rangeBody: 400 messages', () => {
  const first = (schema: v.GenericSchema, input: unknown) => {
    const r = v.safeParse(schema, input);
    return r.success ? null : { message: r.issues[0].message, key: r.issues[0].path?.map((p) => p.key).join('.') };
  };

  it('accepts a custom range and the presets, period defaulting to 30d', () => {
    const ok = v.safeParse(rangeQuery(), { period: 'custom', from: '2024-02-29', to: '2024-03-05', compare: 'year_over_year', interval: 'hour' });
    expect(ok.success && ok.output).toEqual({ period: 'custom', from: '2024-02-29', to: '2024-03-05', compare: 'year_over_year', interval: 'hour' });
    const plain = v.safeParse(rangeQuery(), {});
    expect(plain.success && plain.output.period).toBe('30d');
    expect(first(rangeQuery(), { period: 'all', interval: 'month', compare: 'previous_period' })).toBeNull();
  });

  it('names every allowed value of period, compare and interval', () => {
    expect(first(rangeQuery(), { period: 'week' })?.message).toBe('period must be one of: 24h, today, 7d, 30d, 90d, 6m, 12m, this_month, this_week, custom, all');
    expect(first(rangeQuery(), { compare: 'last_year' })?.message).toBe('compare must be one of: previous_period, year_over_year');
    expect(first(rangeQuery(), { interval: 'week' })?.message).toBe('interval must be one of: hour, day, month');
  });

  it('custom needs both dates, real calendar dates; dates need custom', () => {
    expect(first(rangeQuery(), { period: 'custom', from: '2026-03-01' })).toEqual({ message: 'from and to (YYYY-MM-DD) are required with period=custom', key: 'from' });
    expect(first(rangeQuery(), { period: '7d', from: '2026-03-01', to: '2026-03-02' })).toEqual({ message: 'from and to are only allowed with period=custom', key: 'from' });
    expect(first(rangeQuery(), { to: '2026-03-02' })?.message).toBe('from and to are only allowed with period=custom');
    expect(first(rangeQuery(), { period: 'custom', from: '2026-02-29', to: '2026-03-02' })?.message).toBe('from must be a date (YYYY-MM-DD)');
    expect(first(rangeQuery(), { period: 'custom', from: '2026-03-01', to: '20260302' })?.message).toBe('to must be a date (YYYY-MM-DD)');
  });

  it('to not before from; at most 1827 days', () => {
    expect(first(rangeQuery(), { period: 'custom', from: '2026-03-02', to: '2026-03-01' })).toEqual({ message: 'to must not be before from', key: 'to' });
    expect(first(rangeQuery(), { period: 'custom', from: '2021-01-01', to: '2026-01-01' })).toBeNull();
    expect(first(rangeQuery(), { period: 'custom', from: '2020-12-31', to: '2026-01-01' })?.message).toBe('a custom range may be at most 1827 days long');
  });

  it('interval=hour only for 24h, today, 7d, this_week and custom ranges of at most 7 days', () => {
    const message = 'interval hour is allowed for periods of at most 7 days';
    for (const period of ['24h', 'today', '7d', 'this_week']) expect(first(rangeQuery(), { period, interval: 'hour' })).toBeNull();
    for (const period of ['30d', '90d', '6m', '12m', 'this_month', 'all']) expect(first(rangeQuery(), { period, interval: 'hour' })).toEqual({ message, key: 'interval' });
    expect(first(rangeQuery(), { period: 'custom', from: '2026-03-01', to: '2026-03-07', interval: 'hour' })).toBeNull();
    expect(first(rangeQuery(), { period: 'custom', from: '2026-03-01', to: '2026-03-08', interval: 'hour' })?.message).toBe(message);
  });

  it('the POST body form shares the rules and messages', () => {
    expect(first(rangeBody(), { period: 'custom', from: '2026-03-01', to: '2026-03-02', compare: 'previous_period' })).toBeNull();
    expect(first(rangeBody(), { period: 'custom' })?.message).toBe('from and to (YYYY-MM-DD) are required with period=custom');
    expect(first(rangeBody(), { period: '30d', from: '2026-03-01' })?.message).toBe('from and to are only allowed with period=custom');
    expect(first(rangeBody(), { period: 'custom', from: '2026-03-05', to: '2026-03-01' })?.message).toBe('to must not be before from');
    expect(first(rangeBody(), { period: 'all', compare: 'yoy' })?.message).toBe('compare must be one of: previous_period, year_over_year');
  });
});
