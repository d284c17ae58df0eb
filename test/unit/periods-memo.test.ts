import { Temporal } from 'temporal-polyfill';
import { describe, expect, it } from 'vitest';
import { resolvePeriod, type PeriodKey } from '../../src/reports/periods.js';
import { seededRandom } from '../helpers/report-fixtures.js';

const DAY_KEYS = ['today', '7d', '30d', '90d', '6m', '12m', 'this_month', 'this_week'] as const satisfies readonly PeriodKey[];
// DST at midnight (Santiago: some days have no 00:00), a 30-minute DST (Lord Howe), a +5:45 zone, −3:30 / −2:30.
const ZONES = ['UTC', 'Europe/Berlin', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/St_Johns'];

/** The period's days from plain calendar dates, each day's start from the zone: apart from how resolvePeriod steps them. */
function expected(key: (typeof DAY_KEYS)[number], timeZone: string, now: number) {
  const zone = key === 'this_month' || key === 'this_week' ? 'UTC' : timeZone;
  const today = Temporal.Instant.fromEpochMilliseconds(now).toZonedDateTimeISO(zone).toPlainDate();
  const first = {
    today: today,
    '7d': today.subtract({ days: 6 }),
    '30d': today.subtract({ days: 29 }),
    '90d': today.subtract({ days: 89 }),
    '6m': today.with({ day: 1 }).subtract({ months: 5 }),
    '12m': today.with({ day: 1 }).subtract({ months: 11 }),
    this_month: today.with({ day: 1 }),
    this_week: today.subtract({ days: today.dayOfWeek % 7 }),
  }[key];
  const buckets: number[] = [];
  for (let d = first; Temporal.PlainDate.compare(d, today) <= 0; d = d.add({ days: 1 })) buckets.push(d.toZonedDateTime({ timeZone: zone }).epochMilliseconds);
  return { key, from: buckets[0], now, to: now + 1, granularity: 'day', bucketTimeZone: zone, buckets };
}

describe('calendar periods kept per zone day', () => {
  it('answer every instant as if resolved afresh: asked in random order, at day edges, across DST changes', () => {
    const random = seededRandom(7).next;
    const instants: number[] = [];
    for (let t = Date.parse('2026-01-01T00:00:00Z'); t < Date.parse('2026-12-31T00:00:00Z'); t += 17 * 3_600_000 + 4_321) instants.push(t);
    for (const zone of ZONES) {
      // The last millisecond of a day and the first of the next, in each zone, around its DST changes.
      for (const date of ['2026-04-05', '2026-04-06', '2026-09-06', '2026-09-07', '2026-03-29', '2026-10-25', '2026-03-08', '2026-11-01']) {
        const start = Temporal.PlainDate.from(date).toZonedDateTime({ timeZone: zone }).epochMilliseconds;
        instants.push(start - 1, start, start + 1);
      }
    }
    for (let i = instants.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [instants[i], instants[j]] = [instants[j]!, instants[i]!];
    }
    let checked = 0;
    for (const now of instants) {
      const zone = ZONES[Math.floor(random() * ZONES.length)]!;
      const key = DAY_KEYS[Math.floor(random() * DAY_KEYS.length)]!;
      expect(resolvePeriod(key, zone, now), `${key} ${zone} ${new Date(now).toISOString()}`).toEqual(expected(key, zone, now));
      checked++;
    }
    expect(checked).toBeGreaterThan(600);
  });

  it('hands each caller its own buckets', () => {
    const now = Date.parse('2026-06-10T12:00:00Z');
    const a = resolvePeriod('30d', 'Europe/Berlin', now);
    a.buckets.push(0);
    expect(resolvePeriod('30d', 'Europe/Berlin', now + 1).buckets).toHaveLength(30);
  });
});
