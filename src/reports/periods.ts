import { Temporal } from 'temporal-polyfill';

/** Every period key a report may accept. */
export const ALL_PERIODS = ['24h', 'today', '7d', '30d', '90d', '6m', '12m', 'this_month', 'this_week'] as const;
export type PeriodKey = (typeof ALL_PERIODS)[number];

/** Periods of the general reports (the API contract, plus `today` and `6m`). */
export const REPORT_PERIODS = ALL_PERIODS;
/** Periods of the goals and bots reports. */
export const GOAL_BOT_PERIODS = ['today', '7d', '30d', '6m', '12m'] as const;
/**
 * Every period key, plus `custom` (whole days `from`…`to`, range.ts) and `all` (since the first
 * event). Routes that cannot take a date range keep ALL_PERIODS.
 */
export const RANGE_PERIODS = [...ALL_PERIODS, 'custom', 'all'] as const;
/** A period key of RANGE_PERIODS. */
export type RangePeriodKey = (typeof RANGE_PERIODS)[number];
/** The unit of a period's buckets. */
export type Granularity = 'hour' | 'day' | 'month';

const HOUR_MS = 3_600_000;

export interface ResolvedPeriod {
  key: RangePeriodKey;
  /** Inclusive start, epoch ms (UTC): a day start, or exactly `now − 24 h` for `24h`. */
  from: number;
  /**
   * The last instant counted (answers' `to`): the clock read the period was resolved at, or for a
   * range that ended before it (a past custom range, a comparison) the last millisecond of its end.
   */
  now: number;
  /** Exclusive end, epoch ms (UTC): `now + 1 ms`, so an event stamped at `now` counts and none after it does. */
  to: number;
  granularity: Granularity;
  /** Zone whose calendar the buckets follow (UTC for this_month/this_week). */
  bucketTimeZone: string;
  /**
   * Start of every bucket, epoch ms, ascending, up to the one holding `now` (no bucket in the
   * future); for zero-filled time series. The first hour bucket starts at the clock hour holding
   * `from` (so for `24h` it may start before `from`), the first month bucket on the 1st of the
   * month holding `from`.
   */
  buckets: number[];
  /**
   * Set when the end is a clock time on a shifted date (the comparison of a period that ends now):
   * the range ends at a new instant at every request, so nothing keyed by it is asked again.
   */
  endFollowsClock?: true;
}

const startOfDay = (d: Temporal.ZonedDateTime) => d.startOfDay();
const floorHour = (d: Temporal.ZonedDateTime) => d.round({ smallestUnit: 'hour', roundingMode: 'floor' });

/**
 * Resolves a period key against `now` in the project's zone (README "Reports"). Every period ends
 * at `now`: `24h` = exactly `now − 24 h` … now in clock-hour buckets (25 when now is not on the
 * hour, the first and last partial); `7d`/`30d`/`90d` = the last N calendar days including today;
 * `6m`/`12m` = the last N months including this one; `today`; `this_month`/`this_week` in UTC
 * (weeks start on Sunday). Day buckets run up to today, whose bucket ends at now.
 */
export function resolvePeriod(key: PeriodKey, timeZone: string, now: number): ResolvedPeriod {
  const utcCalendar = key === 'this_month' || key === 'this_week';
  const zone = utcCalendar ? 'UTC' : timeZone;
  const to = now + 1;

  if (key === '24h') {
    const from = now - 24 * HOUR_MS;
    const buckets: number[] = [];
    // The zone's clock hours (at :30 UTC in +5:30) that hold an instant of [from, now). Hours are
    // exact durations, so the starts are 3600 s apart across a DST change too. On the hour, the
    // instant `now` itself opens a 25th hour: its events go to the last bucket instead (time
    // series clamp the hour index), so there are 24 buckets.
    const firstHour = floorHour(Temporal.Instant.fromEpochMilliseconds(from).toZonedDateTimeISO(zone)).epochMilliseconds;
    for (let h = firstHour; h < now; h += HOUR_MS) buckets.push(h);
    return { key, from, now, to, granularity: 'hour', bucketTimeZone: zone, buckets };
  }

  const memoKey = `${key} ${zone}`;
  let days = dayPeriods.get(memoKey);
  if (!days || now < days.todayStart || now >= days.tomorrowStart) {
    days = calendarDays(key, Temporal.Instant.fromEpochMilliseconds(now).toZonedDateTimeISO(zone));
    if (dayPeriods.size >= MEMO_LIMIT) dayPeriods.clear();
    dayPeriods.set(memoKey, days);
  }
  return { key, from: days.from, now, to, granularity: 'day', bucketTimeZone: zone, buckets: days.buckets.slice() };
}

/** The part of a calendar period that only the day holding now decides, and that day's bounds. */
interface CalendarDays {
  from: number;
  buckets: readonly number[];
  todayStart: number;
  tomorrowStart: number;
}

/**
 * Calendar periods of the (key, zone) pairs asked lately, each valid for the zone's day it was
 * resolved in: stepping a period's days through the zone's calendar costs ~0.5 ms for 30 days and
 * ~5 ms for 12 months, paid by every report request before its first read.
 */
const dayPeriods = new Map<string, CalendarDays>();
const MEMO_LIMIT = 1_000;

function calendarDays(key: Exclude<PeriodKey, '24h'>, here: Temporal.ZonedDateTime): CalendarDays {
  let first: Temporal.ZonedDateTime;
  const today = startOfDay(here);
  switch (key) {
    case 'today':
      first = today;
      break;
    case '7d':
    case '30d':
    case '90d':
      first = startOfDay(today.subtract({ days: Number(key.slice(0, -1)) - 1 }));
      break;
    case '6m':
    case '12m':
      first = startOfDay(startOfDay(here.with({ day: 1 })).subtract({ months: Number(key.slice(0, -1)) - 1 }));
      break;
    case 'this_month':
      first = startOfDay(here.with({ day: 1 }));
      break;
    case 'this_week':
      // ISO dayOfWeek: Monday = 1 … Sunday = 7; weeks here start on Sunday.
      first = startOfDay(today.subtract({ days: here.dayOfWeek % 7 }));
      break;
  }
  const buckets: number[] = [];
  for (let d = first; Temporal.ZonedDateTime.compare(d, today) <= 0; d = startOfDay(d.add({ days: 1 }))) {
    buckets.push(d.epochMilliseconds);
  }
  return { from: first.epochMilliseconds, buckets, todayStart: today.epochMilliseconds, tomorrowStart: startOfDay(today.add({ days: 1 })).epochMilliseconds };
}
