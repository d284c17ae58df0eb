import * as v from 'valibot';
import { RANGE_PERIODS, REPORT_PERIODS, type PeriodKey, type RangePeriodKey } from './periods.js';
import { COMPARE_MODES, customRangeDays, hourIntervalAllowed, INTERVALS, MAX_RANGE_DAYS, parseDate, RANGE_MESSAGES, type Interval } from './range.js';

/**
 * A query value that must be one of `allowed`; anything else fails with
 * `{name} must be one of: a, b, c` so the 400 names every allowed value.
 */
export function choiceParam<const T extends readonly string[]>(name: string, allowed: T, fallback: T[number]) {
  return v.optional(v.picklist(allowed, `${name} must be one of: ${allowed.join(', ')}`), fallback);
}

/** `period` accepting `allowed` (in that order in the message), defaulting to `fallback`. */
export function periodParam<const T extends readonly PeriodKey[]>(allowed: T, fallback: T[number]) {
  return choiceParam('period', allowed, fallback);
}

/**
 * `limit` as an integer from 1 to `max` (query strings arrive as text, so it is parsed here);
 * '1.5', '0', 'abc' and `max + 1` all fail with `limit must be an integer from 1 to {max}`.
 */
export function limitParam(max: number, fallback: number) {
  const message = `limit must be an integer from 1 to ${max}`;
  return v.optional(
    v.pipe(
      v.string(message),
      v.regex(/^[0-9]{1,6}$/, message),
      v.transform(Number),
      v.number(message),
      v.minValue(1, message),
      v.maxValue(max, message),
    ),
    String(fallback),
  );
}

/** The bot categories a `filter` may name, `all` first. */
export const BOT_FILTERS = ['all', 'ai_answer', 'indexing', 'training', 'other'] as const;
/** One `filter` value of the bots report. */
export type BotFilter = (typeof BOT_FILTERS)[number];

/** `filter` of the bots report: `filter must be one of: all, ai_answer, indexing, training, other`. */
export const filterParam = () => choiceParam('filter', BOT_FILTERS, 'all');

/** The general reports' `period`: every key, default `30d`. */
export const generalPeriod = () => periodParam(REPORT_PERIODS, '30d');

type PeriodSchema = ReturnType<typeof periodParam>;
type LimitSchema = ReturnType<typeof limitParam>;

/**
 * The query object of a report: `period` (default: every key, `30d`) and, when given, `limit`.
 * Unknown query keys are ignored.
 */
export function reportQuery(): v.ObjectSchema<{ period: PeriodSchema }, undefined>;
export function reportQuery<P extends PeriodSchema>(period: P): v.ObjectSchema<{ period: P }, undefined>;
export function reportQuery<P extends PeriodSchema, L extends LimitSchema>(period: P, limit: L): v.ObjectSchema<{ period: P; limit: L }, undefined>;
export function reportQuery(period: PeriodSchema = generalPeriod(), limit?: LimitSchema) {
  return limit ? v.object({ period, limit }) : v.object({ period });
}

/** `period` accepting every key of RANGE_PERIODS (custom and all included), default `30d`. */
export const rangePeriodParam = () => choiceParam('period', RANGE_PERIODS, '30d');

/** `from` / `to` of a custom range: a real calendar date as `YYYY-MM-DD` (2026-02-30 fails), when given. */
export function dateParam(name: 'from' | 'to') {
  const message = RANGE_MESSAGES.date(name);
  return v.optional(v.pipe(v.string(message), v.check((text) => parseDate(text) !== null, message)));
}

/** `compare`: `compare must be one of: previous_period, year_over_year`, when given. */
export const compareParam = () => v.optional(v.picklist(COMPARE_MODES, RANGE_MESSAGES.compare));
/** `interval` of a time series: `interval must be one of: hour, day, month`, when given (the default is the period's, range.ts defaultInterval). */
export const intervalParam = () => v.optional(v.picklist(INTERVALS, RANGE_MESSAGES.interval));

/** The fields rangeChecks reads, as the range schemas output them. */
export type RangeFields = {
  period: RangePeriodKey;
  from?: string | undefined;
  to?: string | undefined;
  interval?: Interval | undefined;
};

/**
 * The cross-field rules of a range, in this order, each failing with its own message on its
 * field: custom needs both dates; dates need custom; `to` not before `from`; at most
 * MAX_RANGE_DAYS days; `interval=hour` only on short periods (range.ts hourIntervalAllowed).
 * Whether `from` is after today depends on the project's zone: resolveCustomRange answers that.
 */
export function withRangeChecks<S extends v.GenericSchema<unknown, RangeFields>>(schema: S) {
  type Out = v.InferOutput<S>;
  const rule = (field: 'from' | 'to' | 'interval', ok: (input: RangeFields) => boolean, message: string) =>
    v.forward<Out, v.CheckIssue<Out>, never>(v.check<Out, string>((input) => ok(input), message), [field] as never);
  const days = (r: RangeFields) => (r.from !== undefined && r.to !== undefined ? customRangeDays(r.from, r.to) : null);
  return v.pipe(
    schema,
    rule('from', (r) => r.period !== 'custom' || (r.from !== undefined && r.to !== undefined), RANGE_MESSAGES.customNeedsDates),
    rule('from', (r) => r.period === 'custom' || (r.from === undefined && r.to === undefined), RANGE_MESSAGES.datesNeedCustom),
    rule('to', (r) => (days(r) ?? 1) >= 1, RANGE_MESSAGES.toBeforeFrom),
    rule('to', (r) => (days(r) ?? 1) <= MAX_RANGE_DAYS, RANGE_MESSAGES.tooLong),
    rule('interval', (r) => r.interval !== 'hour' || hourIntervalAllowed(r.period, days(r)), RANGE_MESSAGES.hourTooLong),
  );
}

/** The query fields of a ranged report: `period`, `from`, `to`, `compare`, `interval`; spread into a report's own object and wrap with withRangeChecks. */
export const rangeEntries = () => ({ period: rangePeriodParam(), from: dateParam('from'), to: dateParam('to'), compare: compareParam(), interval: intervalParam() });

/** The query of a ranged report: `?period=custom&from=2026-01-01&to=2026-01-31&compare=previous_period&interval=day`. */
export const rangeQuery = () => withRangeChecks(v.object(rangeEntries()));

/** The same range as a POST body `{period, from?, to?, compare?}`, with the same rules and messages. */
export const rangeBody = () =>
  withRangeChecks(v.object({ period: rangePeriodParam(), from: dateParam('from'), to: dateParam('to'), compare: compareParam() }));
