import { Temporal } from 'temporal-polyfill';

export const REPORT_FREQUENCIES = ['weekly', 'monthly'] as const;
export type ReportFrequency = (typeof REPORT_FREQUENCIES)[number];

/** Local hour after which a report goes out on its day (Monday, or the 1st). */
export const SEND_HOUR = 8;

/** One report's span and the span before it, epoch ms, `from` inclusive and `to` exclusive. */
export interface ReportSpan {
  from: number;
  to: number;
  previousFrom: number;
  previousTo: number;
}

const zoned = (ms: number, timeZone: string) => Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(timeZone);

/** Local midnight that starts the week (Monday) or month holding `at`. */
function periodStart(frequency: ReportFrequency, at: Temporal.ZonedDateTime): Temporal.ZonedDateTime {
  const day = at.startOfDay();
  return frequency === 'weekly' ? day.subtract({ days: at.dayOfWeek - 1 }).startOfDay() : day.with({ day: 1 }).startOfDay();
}

const shift = (frequency: ReportFrequency, at: Temporal.ZonedDateTime, n: number) =>
  (frequency === 'weekly' ? at.add({ weeks: n }) : at.add({ months: n })).startOfDay();

/** 08:00 local on the day `start` begins (a DST gap at 08:00 moves it forward, as Temporal does). */
const sendTimeOf = (start: Temporal.ZonedDateTime) => start.with({ hour: SEND_HOUR, minute: 0, second: 0, millisecond: 0 }).epochMilliseconds;

/**
 * The latest send time at or before `now`: Monday 08:00 (weekly) or the 1st at 08:00 (monthly)
 * in `timeZone`. A slot is named by that instant; each slot is sent once.
 */
export function reportSlot(frequency: ReportFrequency, timeZone: string, now: number): number {
  const start = periodStart(frequency, zoned(now, timeZone));
  const slot = sendTimeOf(start);
  return slot <= now ? slot : sendTimeOf(shift(frequency, start, -1));
}

/** The first send time strictly after `now`. */
export function nextReportSlot(frequency: ReportFrequency, timeZone: string, now: number): number {
  const start = periodStart(frequency, zoned(now, timeZone));
  const slot = sendTimeOf(start);
  return slot > now ? slot : sendTimeOf(shift(frequency, start, 1));
}

/**
 * The last whole period that ended at or before `at` — Monday to Sunday, or a calendar month, in
 * `timeZone` — and the one before it, for the changes. A report sent at its slot covers
 * `completedSpan(slot)`; "send now" covers `completedSpan(now)`.
 */
export function completedSpan(frequency: ReportFrequency, timeZone: string, at: number): ReportSpan {
  const to = periodStart(frequency, zoned(at, timeZone));
  const from = shift(frequency, to, -1);
  const previousFrom = shift(frequency, to, -2);
  return { from: from.epochMilliseconds, to: to.epochMilliseconds, previousFrom: previousFrom.epochMilliseconds, previousTo: from.epochMilliseconds };
}
