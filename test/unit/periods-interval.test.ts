import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { bucketKeys } from '../../src/reports/buckets.js';
import { resolvePeriod } from '../../src/reports/periods.js';
import { defaultInterval, resolveAllTime, resolveCustomRange, withInterval } from '../../src/reports/range.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const NOW = at('2026-03-15T10:20:00Z');
const HOUR = 3_600_000;

describe('withInterval: hour buckets', () => {
  it('today in UTC: one bucket per clock hour up to the one holding now, keyed by index', () => {
    const p = withInterval(resolvePeriod('today', 'UTC', NOW), 'hour');
    expect(p.granularity).toBe('hour');
    expect(p.buckets).toHaveLength(11);
    expect([iso(p.buckets[0]!), iso(p.buckets.at(-1)!)]).toEqual(['2026-03-15T00:00:00.000Z', '2026-03-15T10:00:00.000Z']);
    expect(bucketKeys(p)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    expect([p.from, p.now, p.to, p.key]).toEqual([at('2026-03-15T00:00:00Z'), NOW, NOW + 1, 'today']);
  });

  it('at midnight today still has its first hour', () => {
    const midnight = at('2026-03-15T00:00:00Z');
    expect(withInterval(resolvePeriod('today', 'UTC', midnight), 'hour').buckets).toEqual([midnight]);
  });

  it('a custom day with the spring-forward gap in Berlin: 23 hour buckets, each 3600 s after the last', () => {
    const p = withInterval(resolveCustomRange('2026-03-29', '2026-03-29', 'Europe/Berlin', NOW + 30 * 86_400_000), 'hour');
    expect(p.buckets).toHaveLength(23);
    expect(iso(p.buckets[0]!)).toBe('2026-03-28T23:00:00.000Z');
    expect(iso(p.buckets.at(-1)!)).toBe('2026-03-29T21:00:00.000Z');
    expect(p.buckets.every((b, i) => b === p.buckets[0]! + i * HOUR)).toBe(true);
  });

  it('7d in Asia/Kolkata: 7 × 24 − 13 hours up to now, starting at :30 UTC', () => {
    // The 7 local days start 2026-03-09 00:00 IST (03-08 18:30Z); now is 15:50 IST on the 15th.
    const p = withInterval(resolvePeriod('7d', 'Asia/Kolkata', NOW), 'hour');
    expect(iso(p.buckets[0]!)).toBe('2026-03-08T18:30:00.000Z');
    expect(iso(p.buckets.at(-1)!)).toBe('2026-03-15T09:30:00.000Z');
    expect(p.buckets).toHaveLength(6 * 24 + 16);
  });

  it('24h keeps the buckets resolvePeriod gives it', () => {
    const base = resolvePeriod('24h', 'Asia/Kolkata', NOW);
    expect(withInterval(base, 'hour').buckets).toEqual(base.buckets);
  });

  it('refused for periods longer than 7 days, with the 400 message', () => {
    const attempt = (p: Parameters<typeof withInterval>[0]) => {
      try {
        withInterval(p, 'hour');
        return null;
      } catch (e) {
        expect(e).toBeInstanceOf(ApiError);
        return `${(e as ApiError).status} ${(e as ApiError).message}`;
      }
    };
    const refusal = '400 interval hour is allowed for periods of at most 7 days';
    expect(attempt(resolvePeriod('30d', 'UTC', NOW))).toBe(refusal);
    expect(attempt(resolvePeriod('this_month', 'UTC', at('2026-03-02T10:00:00Z')))).toBe(refusal);
    expect(attempt(resolveAllTime({ firstEventAt: NOW - HOUR, createdAt: 0 }, 'UTC', NOW))).toBe(refusal);
    expect(attempt(resolveCustomRange('2026-03-01', '2026-03-08', 'UTC', NOW))).toBe(refusal);
    expect(attempt(resolveCustomRange('2026-03-01', '2026-03-07', 'UTC', NOW))).toBeNull();
    expect(attempt(resolvePeriod('this_week', 'UTC', NOW))).toBeNull();
  });
});

describe('withInterval: day and month buckets', () => {
  it('24h by day: the two local days it touches, the first starting before from', () => {
    const p = withInterval(resolvePeriod('24h', 'UTC', NOW), 'day');
    expect(p.buckets.map(iso)).toEqual(['2026-03-14T00:00:00.000Z', '2026-03-15T00:00:00.000Z']);
    expect(bucketKeys(p)).toEqual(['2026-03-14', '2026-03-15']);
  });

  it('12m by month in Berlin: the 1st at local midnight on either side of DST, across the year end', () => {
    const p = withInterval(resolvePeriod('12m', 'Europe/Berlin', NOW), 'month');
    expect(p.granularity).toBe('month');
    expect(p.buckets.map(iso)).toEqual([
      '2025-03-31T22:00:00.000Z',
      '2025-04-30T22:00:00.000Z',
      '2025-05-31T22:00:00.000Z',
      '2025-06-30T22:00:00.000Z',
      '2025-07-31T22:00:00.000Z',
      '2025-08-31T22:00:00.000Z',
      '2025-09-30T22:00:00.000Z',
      '2025-10-31T23:00:00.000Z',
      '2025-11-30T23:00:00.000Z',
      '2025-12-31T23:00:00.000Z',
      '2026-01-31T23:00:00.000Z',
      '2026-02-28T23:00:00.000Z',
    ]);
    expect(bucketKeys(p)).toEqual(['2025-04', '2025-05', '2025-06', '2025-07', '2025-08', '2025-09', '2025-10', '2025-11', '2025-12', '2026-01', '2026-02', '2026-03']);
  });

  it('30d by month: the first bucket is the month holding from, starting before it', () => {
    const p = withInterval(resolvePeriod('30d', 'UTC', NOW), 'month');
    expect(iso(p.from)).toBe('2026-02-14T00:00:00.000Z');
    expect(p.buckets.map(iso)).toEqual(['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(bucketKeys(p)).toEqual(['2026-02', '2026-03']);
  });

  it('a past custom range in New York by month: across the year end and the March DST change', () => {
    const yearEnd = withInterval(resolveCustomRange('2025-12-15', '2026-01-10', 'America/New_York', NOW), 'month');
    expect(yearEnd.buckets.map(iso)).toEqual(['2025-12-01T05:00:00.000Z', '2026-01-01T05:00:00.000Z']);
    expect(bucketKeys(yearEnd)).toEqual(['2025-12', '2026-01']);
    const dst = withInterval(resolveCustomRange('2026-02-10', '2026-04-05', 'America/New_York', at('2026-05-01T00:00:00Z')), 'month');
    expect(dst.buckets.map(iso)).toEqual(['2026-02-01T05:00:00.000Z', '2026-03-01T05:00:00.000Z', '2026-04-01T04:00:00.000Z']);
  });

  it('month keys follow the local calendar: 1 March in Kolkata starts on 28 February UTC', () => {
    const p = withInterval(resolveCustomRange('2026-03-01', '2026-03-02', 'Asia/Kolkata', NOW), 'month');
    expect([p.buckets.map(iso), bucketKeys(p)]).toEqual([['2026-02-28T18:30:00.000Z'], ['2026-03']]);
  });

  it('default interval: hour for 24h, day otherwise', () => {
    expect(defaultInterval('24h')).toBe('hour');
    for (const key of ['today', '7d', '6m', '12m', 'all', 'custom'] as const) expect(defaultInterval(key)).toBe('day');
  });
});
