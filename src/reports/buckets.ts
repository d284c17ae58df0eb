import { Temporal } from 'temporal-polyfill';
import type { ResolvedPeriod } from './periods.js';

/**
 * The key the time-series SQL gives each bucket of `period`, in bucket order: for hours the
 * index from the first bucket's start (clock hours), for days the local calendar date
 * (`YYYY-MM-DD`), for months the local calendar month (`YYYY-MM`). Matching on dates rather than on "start of day" instants keeps zones whose
 * midnight is skipped by DST exact, whatever instant either side picks as the day's start.
 */
export function bucketKeys(period: ResolvedPeriod): string[] {
  if (period.granularity === 'hour') return period.buckets.map((_, i) => String(i));
  if (period.granularity === 'month') {
    return period.buckets.map((start) => Temporal.Instant.fromEpochMilliseconds(start).toZonedDateTimeISO(period.bucketTimeZone).toPlainDate().toPlainYearMonth().toString());
  }
  const first = period.buckets[0];
  if (first === undefined) return [];
  const date = Temporal.Instant.fromEpochMilliseconds(first).toZonedDateTimeISO(period.bucketTimeZone).toPlainDate();
  // Day buckets are consecutive calendar days, so plain date arithmetic gives the rest.
  return period.buckets.map((_, i) => new Date(Date.UTC(date.year, date.month - 1, date.day + i)).toISOString().slice(0, 10));
}
