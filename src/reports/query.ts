import type { Deps } from '../deps.js';
import { toClickHouseDateTime, type ResolvedPeriod } from './periods.js';

/** How a result column is read back: 64-bit integers arrive as strings and become numbers. */
export type ColumnKind = 'string' | 'number' | 'number?' | 'string?';
/** Column name → kind, for `queryRows`. */
export type RowSpec = Record<string, ColumnKind>;
type ColumnValue<K extends ColumnKind> = K extends 'string' ? string : K extends 'number' ? number : K extends 'number?' ? number | null : string | null;
/** The typed row a spec describes. */
export type RowOf<S extends RowSpec> = { [K in keyof S]: ColumnValue<S[K]> };

/** Bound values for `{name:Type}` placeholders. */
export type QueryParams = Record<string, string | number | readonly string[] | readonly number[]>;

const DAY_MS = 86_400_000;

/**
 * The parameters every period-scoped report binds: `{projectId:String}`,
 * `{from:DateTime('UTC')}`, `{to:DateTime('UTC')}`, the bucket zone `{tz:String}`, and
 * `{dayFrom}`/`{dayTo}`: the first UTC midnight ≥ from and the last ≤ to, between which the
 * rollups read daily rows (sql/window.ts rollupRows). With `daily: false`, or when the period
 * holds no whole UTC day, both are `to` and only 15-minute rows are read.
 */
export function periodParams(projectId: string, period: ResolvedPeriod, opts: { daily?: boolean } = {}): QueryParams {
  let dayFrom = Math.ceil(period.from / DAY_MS) * DAY_MS;
  let dayTo = Math.floor(period.to / DAY_MS) * DAY_MS;
  if (opts.daily === false || dayFrom >= dayTo) dayFrom = dayTo = period.to;
  return {
    projectId,
    from: toClickHouseDateTime(period.from),
    to: toClickHouseDateTime(period.to),
    dayFrom: toClickHouseDateTime(dayFrom),
    dayTo: toClickHouseDateTime(dayTo),
    tz: period.bucketTimeZone,
  };
}

/**
 * Whether daily rows fall each into one bucket of `period`: true only for day buckets that are
 * all whole UTC days (a zone at offset 0 for the whole period). Elsewhere a UTC day straddles two
 * local days, or (hour buckets) holds 24 of them.
 */
export function dailyRowsFitBuckets(period: ResolvedPeriod): boolean {
  return period.granularity === 'day' && period.to % DAY_MS === 0 && period.buckets.every((b) => b % DAY_MS === 0);
}

function convert(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) {
    if (kind === 'number?' || kind === 'string?') return null;
    return kind === 'number' ? 0 : '';
  }
  if (kind === 'number' || kind === 'number?') return typeof value === 'number' ? value : Number(value);
  return String(value);
}

/**
 * Runs a SELECT with bound parameters and returns rows shaped by `spec`: only the named
 * columns, numbers as numbers (even UInt64, which the client sends as strings).
 */
export async function queryRows<S extends RowSpec>(deps: Pick<Deps, 'clickhouse'>, sql: string, params: QueryParams, spec: S): Promise<RowOf<S>[]> {
  const result = await deps.clickhouse.query({ query: sql, query_params: params, format: 'JSONEachRow' });
  const raw = await result.json<Record<string, unknown>>();
  const keys = Object.keys(spec) as (keyof S & string)[];
  return raw.map((r) => {
    const row = {} as Record<string, unknown>;
    for (const k of keys) row[k] = convert(spec[k]!, r[k]);
    return row as RowOf<S>;
  });
}

/** The first row of a query that always answers one (aggregates without GROUP BY). */
export async function queryOne<S extends RowSpec>(deps: Pick<Deps, 'clickhouse'>, sql: string, params: QueryParams, spec: S): Promise<RowOf<S>> {
  const rows = await queryRows(deps, sql, params, spec);
  if (!rows[0]) throw new Error('aggregate query returned no row');
  return rows[0];
}
