import { describe, expect, it } from 'vitest';
import { bucketKeys } from '../../src/reports/buckets.js';
import { resolvePeriod, type ResolvedPeriod } from '../../src/reports/periods.js';
import { comparePeriod, resolveAllTime, resolveCustomRange, withInterval } from '../../src/reports/range.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const NOW = at('2026-03-15T10:20:00Z');

/** from, now and to of a period as ISO strings. */
const bounds = (p: ResolvedPeriod) => [iso(p.from), iso(p.now), iso(p.to)];

/** The checks every comparison must pass: same bucket count and unit, to = now + 1, never reaching the main period (previous). */
function compared(main: ResolvedPeriod, mode: 'previous_period' | 'year_over_year'): ResolvedPeriod {
  const c = comparePeriod(main, mode);
  expect(c.buckets).toHaveLength(main.buckets.length);
  expect([c.granularity, c.bucketTimeZone, c.key]).toEqual([main.granularity, main.bucketTimeZone, main.key]);
  expect(c.to).toBe(c.now + 1);
  expect(c.from).toBeLessThanOrEqual(c.now);
  if (mode === 'previous_period') expect(c.to).toBeLessThanOrEqual(main.from);
  return c;
}

describe('comparePeriod: previous_period', () => {
  it('7d: the 7 days before, the last up to the same clock time', () => {
    const c = compared(resolvePeriod('7d', 'UTC', NOW), 'previous_period');
    expect(bounds(c)).toEqual(['2026-03-02T00:00:00.000Z', '2026-03-08T10:20:00.000Z', '2026-03-08T10:20:00.001Z']);
    expect(bucketKeys(c)).toEqual(['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08']);
  });

  it('30d in Asia/Kolkata: 15 January to 13 February local, up to 15:50 IST', () => {
    const c = compared(resolvePeriod('30d', 'Asia/Kolkata', NOW), 'previous_period');
    expect(bounds(c)).toEqual(['2026-01-14T18:30:00.000Z', '2026-02-13T10:20:00.000Z', '2026-02-13T10:20:00.001Z']);
    expect([bucketKeys(c)[0], bucketKeys(c).at(-1)]).toEqual(['2026-01-15', '2026-02-13']);
  });

  it('24h: the 24 hours before from, hour buckets 24 h earlier', () => {
    const main = resolvePeriod('24h', 'UTC', NOW);
    const c = compared(main, 'previous_period');
    expect(bounds(c)).toEqual(['2026-03-13T10:20:00.000Z', '2026-03-14T10:19:59.999Z', '2026-03-14T10:20:00.000Z']);
    expect([iso(c.buckets[0]!), iso(c.buckets.at(-1)!)]).toEqual(['2026-03-13T10:00:00.000Z', '2026-03-14T10:00:00.000Z']);
    const onTheHour = compared(resolvePeriod('24h', 'UTC', at('2026-03-15T10:00:00Z')), 'previous_period');
    expect(onTheHour.buckets).toHaveLength(24);
    expect([iso(onTheHour.buckets.at(-1)!), iso(onTheHour.now)]).toEqual(['2026-03-14T09:00:00.000Z', '2026-03-14T09:59:59.999Z']);
  });

  it('today in New York the day after spring forward: yesterday from its EST midnight to 11:20 EDT', () => {
    const now = at('2026-03-09T15:20:00Z'); // 11:20 EDT
    const c = compared(resolvePeriod('today', 'America/New_York', now), 'previous_period');
    expect(bounds(c)).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-08T15:20:00.000Z', '2026-03-08T15:20:00.001Z']);
    const hourly = compared(withInterval(resolvePeriod('today', 'America/New_York', now), 'hour'), 'previous_period');
    expect(hourly.buckets).toHaveLength(12);
    expect([iso(hourly.buckets[0]!), iso(hourly.now)]).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-08T15:20:00.000Z']);
  });

  it('this_month on the 26th: the 1st to the 26th of last month, at the same time of day', () => {
    const c = compared(resolvePeriod('this_month', 'Europe/Berlin', at('2026-03-26T10:20:00Z')), 'previous_period');
    expect(bounds(c)).toEqual(['2026-02-01T00:00:00.000Z', '2026-02-26T10:20:00.000Z', '2026-02-26T10:20:00.001Z']);
    expect(bucketKeys(c).at(-1)).toBe('2026-02-26');
  });

  it('this_month on the 31st: February ends on the 28th, the three extra buckets lie after the end', () => {
    const c = compared(resolvePeriod('this_month', 'UTC', at('2026-03-31T10:20:00Z')), 'previous_period');
    expect(bounds(c)).toEqual(['2026-02-01T00:00:00.000Z', '2026-02-28T10:20:00.000Z', '2026-02-28T10:20:00.001Z']);
    expect(bucketKeys(c).slice(-4)).toEqual(['2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03']);
  });

  it('12m: the 12 months before, by day and by month', () => {
    const main = resolvePeriod('12m', 'UTC', NOW);
    expect(main.buckets).toHaveLength(349);
    const c = compared(main, 'previous_period');
    expect(bounds(c)).toEqual(['2024-04-01T00:00:00.000Z', '2025-03-15T10:20:00.000Z', '2025-03-15T10:20:00.001Z']);
    expect(bucketKeys(c).at(-1)).toBe('2025-03-15');
    const monthly = compared(withInterval(main, 'month'), 'previous_period');
    expect(bucketKeys(monthly)).toEqual(['2024-04', '2024-05', '2024-06', '2024-07', '2024-08', '2024-09', '2024-10', '2024-11', '2024-12', '2025-01', '2025-02', '2025-03']);
    expect(iso(monthly.now)).toBe('2025-03-15T10:20:00.000Z');
  });

  it('12m whose comparison holds 29 February: one date more than buckets, so it ends with its last bucket', () => {
    const c = compared(resolvePeriod('12m', 'UTC', at('2025-03-15T10:20:00Z')), 'previous_period');
    expect(bounds(c)).toEqual(['2023-04-01T00:00:00.000Z', '2024-03-14T23:59:59.999Z', '2024-03-15T00:00:00.000Z']);
    expect(bucketKeys(c).at(-1)).toBe('2024-03-14');
  });

  it('a past custom range over the leap day: the same number of dates before it, whole days', () => {
    const c = compared(resolveCustomRange('2024-02-28', '2024-03-01', 'UTC', NOW), 'previous_period');
    expect(bounds(c)).toEqual(['2024-02-25T00:00:00.000Z', '2024-02-27T23:59:59.999Z', '2024-02-28T00:00:00.000Z']);
  });

  it('a past custom week in Berlin after spring forward: the week before, ending at its local midnight', () => {
    const c = compared(resolveCustomRange('2026-03-30', '2026-04-05', 'Europe/Berlin', at('2026-05-01T00:00:00Z')), 'previous_period');
    expect(bounds(c)).toEqual(['2026-03-22T23:00:00.000Z', '2026-03-29T21:59:59.999Z', '2026-03-29T22:00:00.000Z']);
    expect(iso(c.buckets.at(-1)!)).toBe('2026-03-28T23:00:00.000Z');
  });

  it('marks an end that is a clock time, which moves with every request, and only that', () => {
    expect(compared(resolvePeriod('30d', 'UTC', NOW), 'previous_period').endFollowsClock).toBe(true);
    expect(compared(resolvePeriod('24h', 'UTC', NOW), 'previous_period').endFollowsClock).toBe(true);
    expect(compared(resolvePeriod('30d', 'Asia/Kolkata', NOW), 'year_over_year').endFollowsClock).toBe(true);
    expect(compared(resolveCustomRange('2024-02-28', '2024-03-01', 'UTC', NOW), 'previous_period').endFollowsClock).toBeUndefined();
    expect(compared(resolveCustomRange('2026-03-01', '2026-03-07', 'Europe/Berlin', NOW), 'year_over_year').endFollowsClock).toBeUndefined();
    // A custom range ending today ends now.
    expect(compared(resolveCustomRange('2026-03-01', '2026-03-15', 'UTC', NOW), 'previous_period').endFollowsClock).toBe(true);
  });

  it('all time: as many dates again before the first', () => {
    const c = compared(resolveAllTime({ firstEventAt: at('2026-03-11T08:00:00Z'), createdAt: 0 }, 'UTC', NOW), 'previous_period');
    expect(bounds(c)).toEqual(['2026-03-06T00:00:00.000Z', '2026-03-10T10:20:00.000Z', '2026-03-10T10:20:00.001Z']);
  });
});

describe('comparePeriod: year_over_year', () => {
  it('7d and 30d: the same dates a year earlier, up to the same clock time', () => {
    expect(bounds(compared(resolvePeriod('7d', 'UTC', NOW), 'year_over_year'))).toEqual(['2025-03-09T00:00:00.000Z', '2025-03-15T10:20:00.000Z', '2025-03-15T10:20:00.001Z']);
    const month = compared(resolvePeriod('30d', 'UTC', NOW), 'year_over_year');
    expect(bounds(month)).toEqual(['2025-02-14T00:00:00.000Z', '2025-03-15T10:20:00.000Z', '2025-03-15T10:20:00.001Z']);
    expect(bucketKeys(month).at(-1)).toBe('2025-03-15');
  });

  it('24h and today, in Berlin across the March DST change (CET a year earlier)', () => {
    const day = compared(resolvePeriod('24h', 'Europe/Berlin', at('2026-04-15T10:20:00Z')), 'year_over_year');
    expect(bounds(day)).toEqual(['2025-04-14T10:20:00.000Z', '2025-04-15T10:20:00.000Z', '2025-04-15T10:20:00.001Z']);
    expect(iso(day.buckets[0]!)).toBe('2025-04-14T10:00:00.000Z');
    const today = compared(resolvePeriod('today', 'Europe/Berlin', at('2026-03-29T10:20:00Z')), 'year_over_year');
    // 29 March 2026 is CEST at 12:20; 29 March 2025 was CET all day, so 12:20 local is 11:20Z.
    expect(bounds(today)).toEqual(['2025-03-28T23:00:00.000Z', '2025-03-29T11:20:00.000Z', '2025-03-29T11:20:00.001Z']);
  });

  it('this_month on 29 February 2028: February 2027, ending on the 28th', () => {
    const c = compared(resolvePeriod('this_month', 'UTC', at('2028-02-29T10:20:00Z')), 'year_over_year');
    expect(bounds(c)).toEqual(['2027-02-01T00:00:00.000Z', '2027-02-28T10:20:00.000Z', '2027-02-28T10:20:00.001Z']);
    expect(bucketKeys(c).slice(-2)).toEqual(['2027-02-28', '2027-03-01']);
  });

  it('12m: the same as its previous period', () => {
    const main = resolvePeriod('12m', 'America/New_York', NOW);
    expect(comparePeriod(main, 'year_over_year')).toEqual(comparePeriod(main, 'previous_period'));
  });

  it('a custom range starting on 29 February: 28 February a year earlier', () => {
    const c = compared(resolveCustomRange('2024-02-29', '2024-03-02', 'Asia/Kolkata', NOW), 'year_over_year');
    expect(bounds(c)).toEqual(['2023-02-27T18:30:00.000Z', '2023-03-02T18:29:59.999Z', '2023-03-02T18:30:00.000Z']);
    expect(bucketKeys(c)).toEqual(['2023-02-28', '2023-03-01', '2023-03-02']);
  });
});
