import { describe, expect, it } from 'vitest';
import { resolvePeriod } from '../../src/reports/periods.js';
import { dailyRowsFitBuckets, periodParams } from '../../src/reports/query.js';

const at = (iso: string) => Date.parse(iso);

describe('periodParams: the whole UTC days read from daily rollups', () => {
  it('30d in UTC: every day is whole, so the daily range is the period', () => {
    const p = periodParams('p', resolvePeriod('30d', 'UTC', at('2026-03-15T10:20:00Z')));
    expect(p).toMatchObject({ from: '2026-02-14 00:00:00', to: '2026-03-16 00:00:00', dayFrom: '2026-02-14 00:00:00', dayTo: '2026-03-16 00:00:00' });
  });

  it('7d in Asia/Kolkata (+5:30): the partial UTC days at both edges are left to the 15-minute rows', () => {
    const p = periodParams('p', resolvePeriod('7d', 'Asia/Kolkata', at('2026-03-15T10:20:00Z')));
    expect(p).toMatchObject({ from: '2026-03-08 18:30:00', to: '2026-03-15 18:30:00', dayFrom: '2026-03-09 00:00:00', dayTo: '2026-03-15 00:00:00' });
  });

  it('no whole UTC day (24h across midnight) or daily: false → both bounds are `to`, so only 15-minute rows are read', () => {
    const day = periodParams('p', resolvePeriod('24h', 'UTC', at('2026-03-15T10:20:00Z')));
    expect(day).toMatchObject({ to: '2026-03-15 11:00:00', dayFrom: '2026-03-15 11:00:00', dayTo: '2026-03-15 11:00:00' });
    const off = periodParams('p', resolvePeriod('30d', 'UTC', at('2026-03-15T10:20:00Z')), { daily: false });
    expect(off).toMatchObject({ dayFrom: '2026-03-16 00:00:00', dayTo: '2026-03-16 00:00:00' });
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
