import type { Deps } from '../deps.js';
import { closedHoursCutAt, closedHoursOf, pinClosedHours } from '../analysis/closed-hours.js';
import { fromClickHouseDateTime, toClickHouseDateTime } from '../adapters/clickhouse-time.js';
import { insertPartOnce, queryOne, queryRows, sourceParams, type QueryParams, type RowOf, type RowSpec } from './query.js';
import { dayPartStoredSql, fillDayPartSql } from './sql/day-parts.js';
import { storedPartKey, type PartSize } from './stored-parts.js';
import type { ResolvedPeriod } from './periods.js';
import type { Source } from './planner.js';
import { dayPartFamiliesOf, PART_TABLES, withoutPreRank, type PartFamily } from './sql/window.js';

type PartDeps = Pick<Deps, 'clickhouse' | 'latestRow' | 'clock' | 'dataVersions' | 'closedHours' | 'background' | 'storedParts'>;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** A part of fewer closed days merges too few daily states to be worth storing. */
const MIN_PART_DAYS = 2;
/**
 * A list whose closed days come from a part of at most this many values, or counting at most this many
 * of what it ranks by (pageviews, events), merges every value's visitor states rather than ranking them
 * first (preRanked in src/reports/sql/window.ts): a merge costs per element its states hold, and a
 * value's state holds no more visitors than its count (README "Closed days of a period").
 */
const MERGED_WHOLE_MOST = { values: 200, counted: 300_000 } as const;
const mergesWhole = (size: PartSize | undefined) => size !== undefined && (size.values <= MERGED_WHOLE_MOST.values || size.counted <= MERGED_WHOLE_MOST.counted);

/**
 * Runs a rollup read (`sql` over periodRollupRows, `params` from sourceParams) with the closed days
 * of its period merged into one part per family (README "Closed days of a period"): every UTC day
 * before the one the closed hours end in is final until the project's closed-hours version moves,
 * so its daily rows are merged once per version and every later read merges one state per value
 * for them instead of one per day. A part not known stored here is looked for, and stored when
 * missing, in the background after the answer, which reads the daily rows meanwhile.
 */
export async function queryRowsWithDayParts<S extends RowSpec>(deps: PartDeps, sql: string, params: QueryParams, spec: S): Promise<RowOf<S>[]> {
  const families = dayPartFamiliesOf(sql);
  const part = families.length > 0 && deps.background && deps.storedParts ? await dayPartOf(deps, params) : null;
  if (!part) return queryRows(deps, sql, params, spec);
  const now = deps.clock.now();
  const storeKey = (family: PartFamily) => storedPartKey(String(params.projectId), PART_TABLES[family], part.partKey);
  const known = families.map((f) => deps.storedParts!.stored(storeKey(f), now));
  if (known.every((stored) => stored === true)) {
    const whole = families.every((f) => mergesWhole(deps.storedParts!.sizeOf(storeKey(f), now)));
    return queryRows(deps, whole ? withoutPreRank(sql) : sql, { ...params, ...part }, spec);
  }
  const answer = queryRows(deps, sql, params, spec);
  for (const family of families.filter((_, i) => known[i] === undefined)) {
    const partParams = { projectId: params.projectId!, partKey: part.partKey, dayFrom: params.dayFrom!, partTo: part.partTo };
    const token = `day-parts:${String(params.projectId)}:${family}:${part.partKey}`;
    // After the answer; one at a time per part.
    deps.background!.run(token, () => ensureStored(deps, family, partParams, token, storeKey(family)), answer);
  }
  return answer;
}

/**
 * The deps and parameters (sourceParams) of a read from `source`. For rollups the project's
 * closed-hours version is pinned on the deps first (pinClosedHours), so that the read and the
 * rows-after-now check its parameters start leave in one turn of the event loop, as one engine
 * statement, rather than the check first and the read after the version's round trip to Redis.
 */
export async function sourceRead<D extends PartDeps>(deps: D, projectId: string, period: ResolvedPeriod, source: Source): Promise<{ deps: D; params: QueryParams }> {
  const pinned = source === 'rollup' && deps.storedParts ? await pinClosedHours(deps, projectId, period) : deps;
  return { deps: pinned, params: sourceParams(pinned, projectId, period, source) };
}

/**
 * The closed days a read of `params` can take from a part at `now`: [dayFrom, partTo), where partTo
 * is the end of the whole days read (`dayTo`) or the last UTC midnight before the closed hours end
 * (closedHoursCutAt), whichever is first; null when that holds fewer than MIN_PART_DAYS days.
 */
export function closedDaysOf(params: QueryParams, now: number): { from: number; to: number } | null {
  const from = fromClickHouseDateTime(params.dayFrom);
  const to = Math.min(fromClickHouseDateTime(params.dayTo), Math.floor(closedHoursCutAt(now) / DAY_MS) * DAY_MS);
  return to - from >= MIN_PART_DAYS * DAY_MS ? { from, to } : null;
}

/** The part a read of `params` takes (closedDaysOf), keyed by its days and the closed-hours version; null without either. */
async function dayPartOf(deps: PartDeps, params: QueryParams): Promise<{ partTo: string; partKey: string } | null> {
  const days = closedDaysOf(params, deps.clock.now());
  if (!days) return null;
  const closedHours = await closedHoursOf(deps, String(params.projectId));
  if (!closedHours) return null;
  return { partTo: toClickHouseDateTime(days.to), partKey: `${days.from}-${days.to}-${closedHours.version}` };
}

/**
 * Looks for one family's part, stores it when missing, and tells deps.storedParts what ClickHouse
 * holds afterwards: only a marker read back makes a part known stored (a store whose token was
 * seen before inserts nothing).
 */
async function ensureStored(deps: PartDeps, family: PartFamily, params: QueryParams, token: string, storeKey: string): Promise<void> {
  const lookUp = () => queryOne(deps, dayPartStoredSql(family), params, { n: 'number', created: 'number', value_rows: 'number', counted: 'number' });
  let found = await lookUp();
  if (found.n === 0) {
    // The version in the key was read first: a write that lands meanwhile moves the version after it is
    // stored, so the part is either merged with its rows or never read again.
    await insertPartOnce(deps, fillDayPartSql(family), params, token);
    found = await lookUp();
  }
  if (found.n > 0) deps.storedParts!.markerFound(storeKey, PART_TABLES[family], found.created, { values: found.value_rows, counted: found.counted });
  else deps.storedParts!.missing(storeKey, deps.clock.now());
}
