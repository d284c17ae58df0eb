import { Temporal } from 'temporal-polyfill';
import { badRequest } from '../errors.js';
import { resolvePeriod, type Granularity, type RangePeriodKey, type ResolvedPeriod } from './periods.js';

/** Bucket units a time series may ask for (`interval`). */
export const INTERVALS = ['hour', 'day', 'month'] as const satisfies readonly Granularity[];
export type Interval = (typeof INTERVALS)[number];
/** What a period may be compared with (`compare`). */
export const COMPARE_MODES = ['previous_period', 'year_over_year'] as const;
export type CompareMode = (typeof COMPARE_MODES)[number];

/** The longest custom range, in calendar days (five years, one of them a leap year). */
export const MAX_RANGE_DAYS = 1827;
/** The longest period, in calendar days, that may be split into hour buckets. */
export const MAX_HOUR_INTERVAL_DAYS = 7;
/** Presets short enough for hour buckets: nominally at most MAX_HOUR_INTERVAL_DAYS long, whatever today's date. */
const HOUR_INTERVAL_PERIODS: readonly RangePeriodKey[] = ['24h', 'today', '7d', 'this_week'];

/** The 400 messages of ranges, shared by the query/body schemas (params.ts) and the resolvers here. */
export const RANGE_MESSAGES = {
  date: (name: 'from' | 'to') => `${name} must be a date (YYYY-MM-DD)`,
  customNeedsDates: 'from and to (YYYY-MM-DD) are required with period=custom',
  datesNeedCustom: 'from and to are only allowed with period=custom',
  toBeforeFrom: 'to must not be before from',
  tooLong: `a custom range may be at most ${MAX_RANGE_DAYS} days long`,
  fromAfterToday: (today: string) => `from must not be after today (${today} in the project's time zone)`,
  hourTooLong: `interval hour is allowed for periods of at most ${MAX_HOUR_INTERVAL_DAYS} days`,
  compare: `compare must be one of: ${COMPARE_MODES.join(', ')}`,
  interval: `interval must be one of: ${INTERVALS.join(', ')}`,
} as const;

/** When a project started counting, for `period=all`. */
export interface ProjectSpan {
  /** The project's first stored event, epoch ms, or null before the first one. */
  firstEventAt: number | null;
  /** The project's creation, epoch ms: the start of `all` while it has no event. */
  createdAt: number;
}

/** What a request names: a period key, and for `custom` its first and last date. */
export interface RangeInput {
  period: RangePeriodKey;
  from?: string | undefined;
  to?: string | undefined;
}

const HOUR_MS = 3_600_000;
const DATE_SHAPE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

const zoned = (ms: number, zone: string) => Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone);
/** The first instant of `date` in `zone` (00:00, or the first instant after a skipped midnight). */
const dayStart = (date: Temporal.PlainDate, zone: string) => date.toZonedDateTime({ timeZone: zone }).epochMilliseconds;
const floorHour = (d: Temporal.ZonedDateTime) => d.round({ smallestUnit: 'hour', roundingMode: 'floor' });
/** Calendar dates from `a` to `b`, both counted. */
const datesBetween = (a: Temporal.PlainDate, b: Temporal.PlainDate) => a.until(b, { largestUnit: 'days' }).days + 1;

/** Parses `YYYY-MM-DD` into a real calendar date (no 2026-02-30), or null. */
export function parseDate(text: string): Temporal.PlainDate | null {
  if (!DATE_SHAPE.test(text)) return null;
  try {
    return Temporal.PlainDate.from(text, { overflow: 'reject' });
  } catch {
    return null;
  }
}

/** Calendar days of the range `from`…`to` (both counted), or null when either is not a date. */
export function customRangeDays(from: string, to: string): number | null {
  const a = parseDate(from);
  const b = parseDate(to);
  return a && b ? datesBetween(a, b) : null;
}

/**
 * Whether `interval=hour` fits: `24h`, `today`, `7d`, `this_week`, or a custom range of at most
 * 7 dates. Presets are judged by their nominal length so a request valid on the 3rd of the
 * month stays valid on the 20th; `all` never qualifies.
 */
export function hourIntervalAllowed(period: RangePeriodKey, customDays?: number | null): boolean {
  if (period === 'custom') return customDays != null && customDays <= MAX_HOUR_INTERVAL_DAYS;
  return HOUR_INTERVAL_PERIODS.includes(period);
}

/** The bucket unit of a period when no `interval` is asked for: hours for `24h`, days otherwise. */
export const defaultInterval = (key: RangePeriodKey): Interval => (key === '24h' ? 'hour' : 'day');

/** Day buckets: the first instant of every local date from `first` through `last`. */
function dayBuckets(first: Temporal.PlainDate, last: Temporal.PlainDate, zone: string): number[] {
  const starts: number[] = [];
  for (let d = first; Temporal.PlainDate.compare(d, last) <= 0; d = d.add({ days: 1 })) starts.push(dayStart(d, zone));
  return starts;
}

/**
 * A custom range: the whole local days `from`…`to` (YYYY-MM-DD, both counted) in `timeZone`,
 * in day buckets. A `to` of today or later ends the range at `now` (the days after today hold
 * nothing yet, so asking for them is not an error); an earlier `to` ends at the last
 * millisecond of that day. Throws a 400 ApiError for a malformed date, `to` before `from`, more
 * than MAX_RANGE_DAYS days, or a `from` after today.
 */
export function resolveCustomRange(from: string, to: string, timeZone: string, now: number): ResolvedPeriod {
  const first = parseDate(from);
  if (!first) throw badRequest(RANGE_MESSAGES.date('from'));
  const last = parseDate(to);
  if (!last) throw badRequest(RANGE_MESSAGES.date('to'));
  if (Temporal.PlainDate.compare(last, first) < 0) throw badRequest(RANGE_MESSAGES.toBeforeFrom);
  if (datesBetween(first, last) > MAX_RANGE_DAYS) throw badRequest(RANGE_MESSAGES.tooLong);
  const today = zoned(now, timeZone).toPlainDate();
  if (Temporal.PlainDate.compare(first, today) > 0) throw badRequest(RANGE_MESSAGES.fromAfterToday(today.toString()));

  const endsToday = Temporal.PlainDate.compare(last, today) >= 0;
  const lastDay = endsToday ? today : last;
  const end = endsToday ? now : dayStart(last.add({ days: 1 }), timeZone) - 1;
  return {
    key: 'custom',
    from: dayStart(first, timeZone),
    now: end,
    to: end + 1,
    granularity: 'day',
    bucketTimeZone: timeZone,
    buckets: dayBuckets(first, lastDay, timeZone),
  };
}

/**
 * All time: from the start of the local day of the project's first event (its creation while
 * it has none) to `now`, in day buckets. A start after `now` (a clock running behind the
 * stored stamps) is taken as today.
 */
export function resolveAllTime(span: ProjectSpan, timeZone: string, now: number): ResolvedPeriod {
  const began = Math.min(span.firstEventAt ?? span.createdAt, now);
  const first = zoned(began, timeZone).toPlainDate();
  const today = zoned(now, timeZone).toPlainDate();
  return { key: 'all', from: dayStart(first, timeZone), now, to: now + 1, granularity: 'day', bucketTimeZone: timeZone, buckets: dayBuckets(first, today, timeZone) };
}

/**
 * Resolves any RANGE_PERIODS key: presets through resolvePeriod, `custom` through
 * resolveCustomRange, `all` through resolveAllTime (which needs `span`). Throws a 400 ApiError
 * for a custom range without both dates or dates given with another key (the query schemas
 * answer those first; this keeps other callers honest).
 */
export function resolveRange(input: RangeInput, timeZone: string, now: number, span?: ProjectSpan): ResolvedPeriod {
  const hasDates = input.from !== undefined || input.to !== undefined;
  if (input.period === 'custom') {
    if (input.from === undefined || input.to === undefined) throw badRequest(RANGE_MESSAGES.customNeedsDates);
    return resolveCustomRange(input.from, input.to, timeZone, now);
  }
  if (hasDates) throw badRequest(RANGE_MESSAGES.datesNeedCustom);
  if (input.period === 'all') {
    if (!span) throw new Error('period=all needs the project span (first event, creation time)');
    return resolveAllTime(span, timeZone, now);
  }
  return resolvePeriod(input.period, timeZone, now);
}

/** The start of the bucket of `unit` holding instant `ms`, and a step to the next one. */
function bucketSteps(unit: Granularity, ms: number, zone: string): { first: number; next: (start: number) => number } {
  const at = zoned(ms, zone);
  if (unit === 'hour') {
    // Hours are exact durations, so clock-hour starts stay 3600 s apart across a DST change:
    // the time-series SQL indexes them as (ts − first) / 3600.
    return { first: floorHour(at).epochMilliseconds, next: (start) => start + HOUR_MS };
  }
  const step = unit === 'day' ? { days: 1 } : { months: 1 };
  const firstDate = unit === 'day' ? at.toPlainDate() : at.toPlainDate().with({ day: 1 });
  return { first: dayStart(firstDate, zone), next: (start) => dayStart(zoned(start, zone).toPlainDate().add(step), zone) };
}

/**
 * `period` re-bucketed by `interval` in its own bucket zone (the project zone; UTC for
 * this_month/this_week, whose calendar is UTC's): clock hours from the one holding `from`, local
 * days, or local calendar months from the 1st of the month holding `from` (the first bucket may
 * start before `from`, like 24h's first hour), up to the bucket holding `now`. Bounds and key
 * are kept. Throws a 400 ApiError for hours on a period longer than MAX_HOUR_INTERVAL_DAYS.
 */
export function withInterval(period: ResolvedPeriod, interval: Interval): ResolvedPeriod {
  const zone = period.bucketTimeZone;
  if (interval === 'hour') {
    const days = period.key === 'custom' ? datesBetween(zoned(period.from, zone).toPlainDate(), zoned(period.now, zone).toPlainDate()) : null;
    if (!hourIntervalAllowed(period.key, days)) throw badRequest(RANGE_MESSAGES.hourTooLong);
  }
  const { first, next } = bucketSteps(interval, period.from, zone);
  const buckets = [first];
  // Hours stop before `now` like 24h's (on the hour, the instant now is clamped into the last
  // hour by the SQL); days and months run through the one holding now.
  const more = interval === 'hour' ? (start: number) => start < period.now : (start: number) => start <= period.now;
  for (let b = next(first); more(b); b = next(b)) buckets.push(b);
  return { ...period, granularity: interval, buckets };
}

/** Periods compared across whole months: the shift, in months, of their previous period. */
const MONTH_SHIFTS: Readonly<Partial<Record<RangePeriodKey, number>>> = { this_month: 1, '6m': 6, '12m': 12 };

/**
 * The period `period` is compared with, with as many buckets of the same unit, in the same zone:
 *
 * - `previous_period`: `24h` → the 24 hours before `from`; `this_month`/`6m`/`12m`, and any
 *   period in month buckets, → shifted back by their length in whole months (this_month on the
 *   26th at 10:20 → the 1st to the 26th of last month, up to 10:20); every other period → the
 *   same number of calendar dates ending the day before `from`.
 * - `year_over_year`: the same local dates one year earlier (29 Feb → 28 Feb).
 *
 * Starts are local day starts (exact instants for `24h`); the end is the same local clock time as
 * `now` on the shifted day (a range that ended at a day's end ends at the shifted day's end).
 * Buckets run on from the start of the shifted first bucket; when the shifted dates are fewer
 * than the buckets (a shorter month, a leap day left out), the last buckets lie after the end and
 * read zero; when they are more, the comparison ends with its last bucket, so its totals match
 * its series. The answer's `now` is its end, `to` the end + 1 ms; it never reaches `from`. An end
 * that is a clock time rather than a day's end (every comparison of a period ending now) is marked
 * `endFollowsClock`.
 */
export function comparePeriod(period: ResolvedPeriod, mode: CompareMode): ResolvedPeriod {
  const zone = period.bucketTimeZone;
  const fromAt = zoned(period.from, zone);
  const nowAt = zoned(period.now, zone);
  let from: number;
  let end: number;
  let endFollowsClock = true;
  if (period.key === '24h') {
    if (mode === 'previous_period') {
      from = period.from - 24 * HOUR_MS;
      end = period.from - 1;
    } else {
      from = fromAt.subtract({ years: 1 }).epochMilliseconds;
      end = nowAt.subtract({ years: 1 }).epochMilliseconds;
    }
  } else {
    const months = MONTH_SHIFTS[period.key] ?? (period.granularity === 'month' ? period.buckets.length : undefined);
    const shift: Temporal.DurationLike =
      mode === 'year_over_year' ? { years: 1 } : months !== undefined ? { months } : { days: datesBetween(fromAt.toPlainDate(), nowAt.toPlainDate()) };
    from = dayStart(fromAt.toPlainDate().subtract(shift), zone);
    const endsAtDayEnd = period.now + 1 === dayStart(nowAt.toPlainDate().add({ days: 1 }), zone);
    endFollowsClock = !endsAtDayEnd;
    end = endsAtDayEnd
      ? dayStart(nowAt.toPlainDate().subtract(shift).add({ days: 1 }), zone) - 1
      : // Same wall-clock time on the shifted date; a time a DST gap skips moves forward.
        nowAt.subtract(shift).epochMilliseconds;
  }

  const { first, next } = bucketSteps(period.granularity, from, zone);
  const buckets = [first];
  while (buckets.length < period.buckets.length) buckets.push(next(buckets.at(-1)!));
  end = Math.min(end, next(buckets.at(-1)!) - 1);
  if (mode === 'previous_period') end = Math.min(end, period.from - 1);
  end = Math.max(end, from);
  return { key: period.key, from, now: end, to: end + 1, granularity: period.granularity, bucketTimeZone: zone, buckets, ...(endFollowsClock ? { endFollowsClock } : {}) };
}
