import type { Deps } from '../deps.js';
import { fromClickHouseDateTime, toClickHouseDateTime, toClickHouseDateTime64 } from '../adapters/clickhouse-time.js';
import type { ResolvedPeriod } from './periods.js';
import { latestRowBound } from './latest-row.js';
import { withoutDayPart, withoutEdgeRows, withoutRawSlices } from './sql/window.js';

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
const QUARTER_MS = 900_000;

/**
 * The parameters every period-scoped report binds (sql/window.ts): `{projectId:String}`, the
 * exact bounds `{from}`/`{to}` (DateTime64(3)), `{readTo}` (where RAW_WINDOW stops: `to` here,
 * see rawParams), `{rollupFrom}`/`{rollupTo}`: the 15-minute edges
 * inside them, between which rollup rows are read (raw events outside), `{dayFrom}`/`{dayTo}`:
 * the first UTC midnight ≥ rollupFrom and the last ≤ rollupTo, between which the rollups read
 * daily rows, the bucket zone `{tz:String}`, and for hour buckets `{hourBase}` (the first
 * bucket's start) and `{lastHour}` (the last bucket's index). With `daily: false`, or when the
 * range holds no whole UTC day, dayFrom and dayTo are both rollupTo and only 15-minute rows are read.
 * `{partTo}` is `dayFrom`: no closed-days part is read (src/reports/day-parts.ts binds one).
 */
export function periodParams(projectId: string, period: ResolvedPeriod, opts: { daily?: boolean; rollupEnd?: number } = {}): QueryParams {
  let rollupFrom = Math.ceil(period.from / QUARTER_MS) * QUARTER_MS;
  let rollupTo = opts.rollupEnd ?? Math.floor(period.to / QUARTER_MS) * QUARTER_MS;
  if (rollupFrom >= rollupTo) rollupFrom = rollupTo = period.from; // no whole quarter hour: all raw
  let dayFrom = Math.ceil(rollupFrom / DAY_MS) * DAY_MS;
  let dayTo = Math.floor(rollupTo / DAY_MS) * DAY_MS;
  if (opts.daily === false || dayFrom >= dayTo) dayFrom = dayTo = rollupTo;
  return {
    projectId,
    from: toClickHouseDateTime64(period.from),
    to: toClickHouseDateTime64(period.to),
    readTo: toClickHouseDateTime64(period.to),
    rollupFrom: toClickHouseDateTime(rollupFrom),
    rollupTo: toClickHouseDateTime(rollupTo),
    dayFrom: toClickHouseDateTime(dayFrom),
    dayTo: toClickHouseDateTime(dayTo),
    partTo: toClickHouseDateTime(dayFrom),
    tz: period.bucketTimeZone,
    hourBase: toClickHouseDateTime(period.buckets[0] ?? period.from),
    lastHour: Math.max(0, period.buckets.length - 1),
  };
}

/**
 * What a read of rollupParams or rawParams still has to learn: whether rows are stored after
 * now, and if so the parameters that cut the period there. Carried under a symbol, so spreading
 * the parameters (`{ ...params, limit }`) keeps it and the client never binds it.
 */
const AFTER_NOW = Symbol('rows after now');
interface AfterNowCheck {
  rowsAfterNow: Promise<boolean>;
  cutAtNow: QueryParams;
}

/**
 * periodParams for a read from rollups. Events are stamped at ingest, so normally nothing is
 * stored after now: then the rollup rows holding now hold nothing later, and they are read whole
 * up to the next UTC midnight (today's daily row, no raw slice at the end), as fast as before
 * periods ended at now. Only when rows after now exist (an import with future timestamps, a test
 * clock) does the end fall back to 15-minute rows and a raw slice cut at now (endingNow).
 */
export function rollupParams(deps: EndingNowDeps, projectId: string, period: ResolvedPeriod, opts: { daily?: boolean } = {}): QueryParams {
  const usual = periodParams(projectId, period, { ...opts, rollupEnd: nextUtcMidnight(period.to) });
  return endingNow(deps, projectId, period, usual, periodParams(projectId, period, opts));
}

/**
 * periodParams for a read of raw events (RAW_WINDOW). The engine remembers how large each
 * aggregation's hash table grew, keyed by the statement's tables, WHERE and GROUP BY with the bound
 * values in them, and sizes the table at once the next time; a WHERE bounded by `to` (now + 1 ms)
 * is new at every request, so a visit pass never found its size and grew its table step by step
 * (referrers by visit at 1M events, 30d: 37 → 28 ms when the size is known). So `readTo` is the
 * next UTC midnight — the same statement all day, the same rows while nothing is stored after
 * now — unless rows are (endingNow).
 */
export function rawParams(deps: EndingNowDeps, projectId: string, period: ResolvedPeriod, opts: { daily?: boolean } = {}): QueryParams {
  const exact = periodParams(projectId, period, opts);
  return endingNow(deps, projectId, period, { ...exact, readTo: toClickHouseDateTime64(nextUtcMidnight(period.to)) }, exact);
}

/** A period whose end lies this long before the clock ended before now (a past range, a comparison): rows after it are a certainty. */
export const ENDED_BEFORE_NOW_MS = 60_000;

const nextUtcMidnight = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS;

/** What endingNow reads: the answer cache's latest row, or the data versions' latest-row stamp, else ClickHouse. */
type EndingNowDeps = Pick<Deps, 'clickhouse' | 'latestRow' | 'clock' | 'dataVersions'>;

/**
 * The parameters of a read of `period`: `usual` (reading past its end, to the next UTC midnight)
 * when nothing is stored after now, else `exact` (cut at its end). A period that ended before now
 * gets `exact` at once. Otherwise `usual` is returned with the check running under AFTER_NOW:
 * `queryRows` and `queryJson` read with it beside the check and read again with `exact` only when
 * the check finds rows. The check compares the period's end with a bound on the project's latest
 * row (src/reports/latest-row.ts): the answer cache's (deps.latestRow, one per data version), the
 * latest-row stamp Redis keeps with the data version (no engine statement), or, when neither is
 * known, the one ClickHouse gives (one statement for every request of the day, which the combined
 * reads of a dashboard ask once: README "Where the computed time goes").
 */
function endingNow(deps: EndingNowDeps, projectId: string, period: ResolvedPeriod, usual: QueryParams, exact: QueryParams): QueryParams {
  const now = deps.clock.now();
  if (period.to < now - ENDED_BEFORE_NOW_MS) return exact;
  const bound = deps.latestRow?.projectId === projectId ? deps.latestRow.at : latestRowBound(deps, projectId, now);
  return withCut(usual, bound.then((at) => at >= period.to), exact);
}

/** `usual` carrying the pending check and the parameters that cut the period at now (read when the check finds rows). */
const withCut = (usual: QueryParams, rowsAfterNow: Promise<boolean>, cutAtNow: QueryParams): QueryParams => {
  // A caller that fails before reading leaves the check unawaited.
  rowsAfterNow.catch(() => {});
  const pending: AfterNowCheck = { rowsAfterNow, cutAtNow };
  return Object.assign(usual, { [AFTER_NOW]: pending });
};

/** The parameters of a report computed from `source`: rollupParams for rollups, rawParams for raw events. */
export const sourceParams = (deps: EndingNowDeps, projectId: string, period: ResolvedPeriod, source: 'rollup' | 'raw', opts: { daily?: boolean } = {}): QueryParams =>
  source === 'rollup' ? rollupParams(deps, projectId, period, opts) : rawParams(deps, projectId, period, opts);

/**
 * Whether daily rows fall each into one bucket of `period`: true only for day or month buckets that all
 * start on UTC midnights (a zone at offset 0 for the whole period; the last bucket, today, ends
 * at now: its daily row holds nothing later, or rollupParams falls back to 15-minute rows and raw
 * events for it). Elsewhere a UTC day straddles two local days, or (hour buckets) holds 24 of them.
 */
export function dailyRowsFitBuckets(period: ResolvedPeriod): boolean {
  return period.granularity !== 'hour' && period.buckets.every((b) => b % DAY_MS === 0);
}

/** The instants (epoch ms) of the bounds periodParams sets. */
function boundsOf(params: QueryParams) {
  const [from, to, rollupFrom, rollupTo, dayFrom, dayTo] = [params.from, params.to, params.rollupFrom, params.rollupTo, params.dayFrom, params.dayTo].map(fromClickHouseDateTime);
  return { from, to, rollupFrom, rollupTo, dayFrom, dayTo };
}
type Bounds = ReturnType<typeof boundsOf>;

/** Whether the period's bounds both fall inside the rollup range (periodParams), so no raw slice holds a row. */
const rawSlicesEmpty = (b: Bounds): boolean => b.from === b.rollupFrom && b.rollupTo >= b.to;

/** Whether the rollup range is whole UTC days (periodParams), so no 15-minute edge row is read. */
const edgesEmpty = (b: Bounds): boolean => b.rollupFrom === b.dayFrom && b.dayTo === b.rollupTo;

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
  const raw = await queryJson(deps, sql, params);
  const keys = Object.keys(spec) as (keyof S & string)[];
  return raw.map((r) => {
    const row = {} as Record<string, unknown>;
    for (const k of keys) row[k] = convert(spec[k]!, r[k]);
    return row as RowOf<S>;
  });
}

/**
 * Runs a SELECT with bound parameters and returns its rows as the engine sends them. With the
 * parameters of rollupParams or rawParams it reads beside their rows-after-now check, and again
 * with the period cut at now when the check finds rows.
 */
export async function queryJson(deps: Pick<Deps, 'clickhouse'>, sql: string, params: QueryParams): Promise<Record<string, unknown>[]> {
  const pending = (params as { [AFTER_NOW]?: AfterNowCheck })[AFTER_NOW];
  if (!pending) return readJson(deps, sql, params);
  const usual = readJson(deps, sql, params);
  usual.catch(() => {});
  // The caller's own parameters (a limit) stay; the period's are replaced by the cut ones.
  return (await pending.rowsAfterNow) ? readJson(deps, sql, { ...params, ...pending.cutAtNow }) : usual;
}

async function readJson(deps: Pick<Deps, 'clickhouse'>, sql: string, params: QueryParams): Promise<Record<string, unknown>[]> {
  const bounds = boundsOf(params);
  const sliced = rawSlicesEmpty(bounds) ? withoutRawSlices(sql) : sql;
  const edged = edgesEmpty(bounds) ? withoutEdgeRows(sliced) : sliced;
  const query = params.partTo === params.dayFrom ? withoutDayPart(edged) : edged;
  const result = await deps.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  return result.json<Record<string, unknown>>();
}

/** The first row of a query that always answers one (aggregates without GROUP BY). */
export async function queryOne<S extends RowSpec>(deps: Pick<Deps, 'clickhouse'>, sql: string, params: QueryParams, spec: S): Promise<RowOf<S>> {
  const rows = await queryRows(deps, sql, params, spec);
  if (!rows[0]) throw new Error('aggregate query returned no row');
  return rows[0];
}

/**
 * Runs an INSERT … SELECT that stores a cached part with its marker row: as one block, so the marker
 * is stored with every row or not at all (an INSERT … SELECT squashes its rows into blocks of about
 * a million), under a deduplication token, so that two stores of the same part (two requests, two
 * processes) keep it once.
 */
export async function insertPartOnce(deps: Pick<Deps, 'clickhouse'>, sql: string, params: QueryParams, token: string): Promise<void> {
  await deps.clickhouse.command({
    query: sql,
    query_params: params,
    clickhouse_settings: {
      insert_deduplicate: 1,
      insert_deduplication_token: token,
      min_insert_block_size_rows: '1000000000000',
      min_insert_block_size_bytes: '1000000000000',
    },
  });
}
