import { ANALYTICS_TABLES } from '../analytics-tables.js';
import { BoundedMap } from '../adapters/bounded-map.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Taken off a part's lifetime: ClickHouse stamps `created` by its own clock. */
const CLOCK_MARGIN_MS = HOUR_MS;
/** How long a part found missing after a store (its token was seen before: a part dropped by retention) is not looked for again. */
const MISSING_RECHECK_MS = HOUR_MS;

/** A stored part's size: its values (rows besides its marker) and the count its lists rank by, summed over them. */
export type PartSize = { values: number; counted: number };

/** What is known of a part: stored or found missing, until when, and its size when read. */
type Known = { stored: boolean; until: number; size?: PartSize };

/**
 * The cached parts this process knows to be stored — closed days of a rollup family
 * (src/reports/day-parts.ts) and visits of closed hours (src/analysis/closed-hours.ts) — each
 * until shortly before its retention may drop it (markerFound), and parts found missing after a
 * store, for a while. A read takes a part known here without looking for its marker first: a
 * check beside every read costs the embedded engine a statement branch, more than a part saves on
 * a small site (README "Closed days of a period", "Visits of closed hours").
 */
export class StoredParts {
  private readonly known: BoundedMap<string, Known>;
  private readonly retentionDays: number;

  /** `retentionDays`: the configured RETENTION_DAYS (a table's parts are kept no longer than it, src/adapters/migrate.ts). */
  constructor(opts: { retentionDays?: number; maxEntries?: number } = {}) {
    this.known = new BoundedMap(opts.maxEntries ?? 10_000);
    this.retentionDays = opts.retentionDays ?? Number.POSITIVE_INFINITY;
  }

  /** Whether the part is known stored at `now`; undefined when it should be looked for. */
  stored(key: string, now: number): boolean | undefined {
    return this.live(key, now)?.stored;
  }

  /** The size of a part known stored at `now`, when that was read with it. */
  sizeOf(key: string, now: number): PartSize | undefined {
    const entry = this.live(key, now);
    return entry?.stored ? entry.size : undefined;
  }

  /** What was found of the part, true until `until`, and its size. */
  found(key: string, stored: boolean, until: number, size?: PartSize): void {
    this.known.set(key, size === undefined ? { stored, until } : { stored, until, size });
  }

  /** The part was not found after a store: it is not looked for again for a while. */
  missing(key: string, now: number): void {
    this.found(key, false, now + MISSING_RECHECK_MS);
  }

  /**
   * The part's marker was read back, stored at `createdSec` (ClickHouse's clock, Unix seconds): the
   * part is known stored until an hour before retention may drop it (its table's ANALYTICS_TABLES
   * `keepDays`, or less with a shorter retention).
   */
  markerFound(key: string, table: string, createdSec: number, size?: PartSize): void {
    const keepMs = Math.min(keepDaysOf(table), this.retentionDays) * DAY_MS;
    this.found(key, true, createdSec * 1000 + keepMs - CLOCK_MARGIN_MS, size);
  }

  /** What is known of the part at `now`; an entry whose time is up is dropped. */
  private live(key: string, now: number): Known | undefined {
    const entry = this.known.get(key);
    if (entry && entry.until > now) return entry;
    this.known.delete(key);
    return undefined;
  }
}

/** The key of a part of `table` (`{family}_parts`, `visit_parts`) in StoredParts. */
export const storedPartKey = (projectId: string, table: string, partKey: string): string => `${projectId}/${table}/${partKey}`;

/** The days retention keeps a table's rows at most (its ANALYTICS_TABLES `keepDays`). */
function keepDaysOf(table: string): number {
  const entry = ANALYTICS_TABLES.find((t) => t.name === table);
  if (!entry || !('keepDays' in entry)) throw new Error(`${table} has no keepDays in ANALYTICS_TABLES`);
  return entry.keepDays;
}
