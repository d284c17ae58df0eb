import * as v from 'valibot';
import type { ReportContext } from './definition.js';
import { RANGE_PERIODS, resolvePeriod, type PeriodKey, type ResolvedPeriod } from './periods.js';

/** `period`, `from`, `to`: the fields every report answer starts with. */
export const PeriodEntries = {
  period: v.pipe(v.picklist(RANGE_PERIODS), v.description('The period key the answer covers')),
  from: v.pipe(v.string(), v.description('Start of the period, inclusive (ISO 8601, UTC)')),
  to: v.pipe(v.string(), v.description('End of the period: now, the last instant counted (ISO 8601, UTC)')),
};

/** A described number field for response schemas. */
export const num = (description: string) => v.pipe(v.number(), v.description(description));
/** A described string field for response schemas. */
export const str = (description: string) => v.pipe(v.string(), v.description(description));

/** The period fields of an answer. */
export function periodFields(p: ResolvedPeriod) {
  return { period: p.key, from: new Date(p.from).toISOString(), to: new Date(p.now).toISOString() };
}

/** Resolves `key` for the project's time zone at the app clock's now. */
export function resolveFor(ctx: ReportContext, key: PeriodKey): ResolvedPeriod {
  return resolvePeriod(key, ctx.project.timeZone, ctx.deps.clock.now());
}

/**
 * Ranking order shared by every ranked report: metric descending, then name ascending by
 * code point (the same order ClickHouse gives strings), so ties are stable.
 */
export function byMetricThenName<T>(metric: (row: T) => number, name: (row: T) => string) {
  return (a: T, b: T) => metric(b) - metric(a) || compareNames(name(a), name(b));
}

/** Byte-wise string order as ClickHouse sorts (UTF-8 bytes ≡ code points). */
export function compareNames(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const d = ca[i]!.codePointAt(0)! - cb[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}
