import { Temporal } from 'temporal-polyfill';

/** Every period key a report may accept. */
export const ALL_PERIODS = ['24h', 'today', '7d', '30d', '90d', '6m', '12m', 'this_month', 'this_week'] as const;
export type PeriodKey = (typeof ALL_PERIODS)[number];

/** Periods of the general reports (contract §4.1, plus `today` and `6m`). */
export const REPORT_PERIODS = ALL_PERIODS;
/** Periods of the goals and bots reports (contract §4.3). */
export const GOAL_BOT_PERIODS = ['today', '7d', '30d', '6m', '12m'] as const;

export interface ResolvedPeriod {
  key: PeriodKey;
  /** Inclusive start, epoch ms (UTC). Always on a 15-minute boundary. */
  from: number;
  /** Exclusive end, epoch ms (UTC): the end of the last bucket. */
  to: number;
  granularity: 'hour' | 'day';
  /** Zone whose calendar the day buckets follow (UTC for this_month/this_week). */
  bucketTimeZone: string;
  /** Start of every bucket, epoch ms, ascending; for zero-filled time series. */
  buckets: number[];
}

const startOfDay = (d: Temporal.ZonedDateTime) => d.startOfDay();

/**
 * Resolves a period key against `now` in the project's zone (DESIGN.md §7): `24h` = the current
 * hour and the 23 before it; `7d`/`30d`/`90d` = the last N calendar days including today;
 * `6m`/`12m` = the last N months including this one; `today`; `this_month`/`this_week` in UTC
 * (weeks start on Sunday). Bounds follow the calendar, so the current day/hour is whole.
 */
export function resolvePeriod(key: PeriodKey, timeZone: string, now: number): ResolvedPeriod {
  const utcCalendar = key === 'this_month' || key === 'this_week';
  const zone = utcCalendar ? 'UTC' : timeZone;
  const here = Temporal.Instant.fromEpochMilliseconds(now).toZonedDateTimeISO(zone);

  if (key === '24h') {
    const hourStart = here.round({ smallestUnit: 'hour', roundingMode: 'floor' });
    const to = hourStart.add({ hours: 1 }).epochMilliseconds;
    const from = to - 24 * 3600_000;
    const buckets = Array.from({ length: 24 }, (_, i) => from + i * 3600_000);
    return { key, from, to, granularity: 'hour', bucketTimeZone: zone, buckets };
  }

  let first: Temporal.ZonedDateTime;
  let end: Temporal.ZonedDateTime;
  const today = startOfDay(here);
  switch (key) {
    case 'today':
      first = today;
      end = today.add({ days: 1 });
      break;
    case '7d':
    case '30d':
    case '90d': {
      const n = Number(key.slice(0, -1));
      first = startOfDay(today.subtract({ days: n - 1 }));
      end = startOfDay(today.add({ days: 1 }));
      break;
    }
    case '6m':
    case '12m': {
      const n = Number(key.slice(0, -1));
      const monthStart = startOfDay(here.with({ day: 1 }));
      first = startOfDay(monthStart.subtract({ months: n - 1 }));
      end = startOfDay(monthStart.add({ months: 1 }));
      break;
    }
    case 'this_month':
      first = startOfDay(here.with({ day: 1 }));
      end = startOfDay(first.add({ months: 1 }));
      break;
    case 'this_week': {
      // ISO dayOfWeek: Monday = 1 … Sunday = 7; weeks here start on Sunday.
      first = startOfDay(today.subtract({ days: here.dayOfWeek % 7 }));
      end = startOfDay(first.add({ days: 7 }));
      break;
    }
  }
  const buckets: number[] = [];
  for (let d = first; Temporal.ZonedDateTime.compare(d, end) < 0; d = startOfDay(d.add({ days: 1 }))) {
    buckets.push(d.epochMilliseconds);
  }
  return { key, from: first.epochMilliseconds, to: end.epochMilliseconds, granularity: 'day', bucketTimeZone: zone, buckets };
}

/** ClickHouse DateTime literal (UTC, seconds) for a bound parameter of type DateTime('UTC'). */
export const toClickHouseDateTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
