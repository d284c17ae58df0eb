import type { Config } from '../config.js';
import { ANALYTICS_TABLES } from '../analytics-tables.js';
import { BoundedMap } from '../adapters/bounded-map.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Taken off a part's lifetime: ClickHouse stamps `created` by its own clock. */
const CLOCK_MARGIN_MS = HOUR_MS;

/**
 * The cached parts this process knows to be stored — closed days of a rollup family
 * (src/reports/day-parts.ts) and visits of closed hours (src/analysis/closed-hours.ts) — each
 * until shortly before its retention may drop it (partKeptUntil), and parts found missing after a
 * store, for a while. A read takes a part known here without looking for its marker first: a
 * check beside every read costs the embedded engine a statement branch, more than a part saves on
 * a small site (README "Closed days of a period", "Visits of closed hours").
 */
export class StoredParts {
  private readonly known: BoundedMap<string, { stored: boolean; until: number; values?: number }>;
  constructor(maxEntries = 10_000) {
    this.known = new BoundedMap(maxEntries);
  }

  /** Whether the part is known stored at `now`; undefined when it should be looked for. */
  stored(key: string, now: number): boolean | undefined {
    const entry = this.known.get(key);
    if (entry && entry.until > now) return entry.stored;
    this.known.delete(key);
    return undefined;
  }

  /** How many values (rows besides its marker) a part known stored at `now` holds, when that was read with it. */
  valuesOf(key: string, now: number): number | undefined {
    return this.stored(key, now) ? this.known.get(key)!.values : undefined;
  }

  /** What was found of the part, true until `until`, and how many values it holds. */
  found(key: string, stored: boolean, until: number, values?: number): void {
    this.known.set(key, values === undefined ? { stored, until } : { stored, until, values });
  }
}

/**
 * Until when a part of `table` whose marker was stored at `createdSec` (ClickHouse's clock, Unix
 * seconds) is surely still there: its table's retention (ANALYTICS_TABLES `keepDays`, or less with
 * a shorter RETENTION_DAYS, as src/adapters/migrate.ts sets it), less an hour for the clocks.
 */
export function partKeptUntil(config: Pick<Config, 'RETENTION_DAYS'>, table: string, createdSec: number): number {
  return createdSec * 1000 + Math.min(keepDaysOf(table), config.RETENTION_DAYS) * DAY_MS - CLOCK_MARGIN_MS;
}

/** The days retention keeps a table's rows at most (its ANALYTICS_TABLES `keepDays`). */
function keepDaysOf(table: string): number {
  const entry = ANALYTICS_TABLES.find((t) => t.name === table);
  if (!entry || !('keepDays' in entry)) throw new Error(`${table} has no keepDays in ANALYTICS_TABLES`);
  return entry.keepDays;
}
