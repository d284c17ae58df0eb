import * as v from 'valibot';
import { REPORT_PERIODS, type PeriodKey } from './periods.js';

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
