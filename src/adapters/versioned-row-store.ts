import type { Clock } from './clock.js';
import { fromClickHouseDateTime, toClickHouseDateTime64 } from './clickhouse-time.js';
import type { DataVersions } from './data-version.js';
import { EncodedRows, type RowStore, type Rows } from './row-store.js';

/** The projects `rows` belong to, or 'all' when they cannot be told without decoding them. */
export function projectsOf(rows: Rows): readonly string[] | 'all' {
  if (rows instanceof EncodedRows) return rows.projectIds ?? 'all';
  const ids = new Set<string>();
  for (const row of rows) {
    if (typeof row.project_id !== 'string') return 'all';
    ids.add(row.project_id);
  }
  return [...ids];
}

/**
 * The earlier of the stamp kept so far (undefined: no row yet; null: unknown) and a row's `ts` as
 * stored text (`YYYY-MM-DD hh:mm:ss.mmm`, which sorts as time does); a row without one makes it unknown.
 */
export function earlierStamp(kept: string | null | undefined, ts: unknown): string | null {
  if (kept === null || typeof ts !== 'string') return null;
  return kept === undefined || ts < kept ? ts : kept;
}

/** The later of the stamp kept so far and a row's `ts` as stored text, as earlierStamp keeps the earlier. */
export function laterStamp(kept: string | null | undefined, ts: unknown): string | null {
  if (kept === null || typeof ts !== 'string') return null;
  return kept === undefined || ts > kept ? ts : kept;
}

/**
 * A row's stamp as closed hours count it: its `ts`; none for an event without a session floor
 * (an import's, a session of unknown start), whose visit may reach back into closed hours, so
 * that its write moves the closed-hours version and with it the floorless mark (README "Visits of
 * closed hours").
 */
export const closedHoursStamp = (table: string, row: Readonly<Record<string, unknown>>): unknown => (table === 'events' && !row.session_floor ? undefined : row.ts);

/** The earliest stamp (closedHoursStamp) of `rows` of `table` as stored text, or undefined when not known. */
export function earliestOf(table: string, rows: Rows): string | undefined {
  if (rows instanceof EncodedRows) return rows.earliest;
  let earliest: string | null | undefined;
  for (const row of rows) earliest = earlierStamp(earliest, closedHoursStamp(table, row));
  return earliest ?? undefined;
}

/**
 * Each written project's latest `ts` (epoch ms), where every one of its rows has one: the encoder's
 * latest for every project of encoded rows, or nothing when it kept none (an import, a replayed
 * batch). A project missing here loses its latest-row stamp with the move (DataVersions.moved).
 */
export function latestRowsOf(rows: Rows, projects: readonly string[] | 'all'): ReadonlyMap<string, number> {
  if (projects === 'all') return new Map();
  if (rows instanceof EncodedRows) {
    const at = fromClickHouseDateTime(rows.latest);
    return Number.isFinite(at) ? new Map(projects.map((id) => [id, at])) : new Map();
  }
  const latest = new Map<string, number>();
  const unknown = new Set<string>();
  for (const row of rows) {
    const id = String(row.project_id);
    const at = fromClickHouseDateTime(row.ts);
    if (!Number.isFinite(at)) unknown.add(id);
    else if (at > (latest.get(id) ?? Number.NEGATIVE_INFINITY)) latest.set(id, at);
  }
  for (const id of unknown) latest.delete(id);
  return latest;
}

const STORED_DATE = /^\d{4}-\d{2}-\d{2} /;
const HOUR_MS = 3_600_000;

/**
 * The start of the UTC hour holding `at`: events stamped before it belong to closed hours, whose
 * visits are summed once and kept (README "Visits of closed hours").
 */
export const closedHoursEnd = (at: number): number => Math.floor(at / HOUR_MS) * HOUR_MS;

/**
 * Whether an insert into `table` may hold events stamped before the UTC hour of `now` (closed
 * hours). Only the raw events count; rows whose earliest stamp is unknown (an import, a batch
 * replayed from the journal, an event without a session floor: closedHoursStamp) may.
 */
export function touchesClosedHours(table: string, rows: Rows, now: number): boolean {
  if (table !== 'events') return false;
  const earliest = earliestOf(table, rows);
  return earliest === undefined || !STORED_DATE.test(earliest) || earliest < toClickHouseDateTime64(closedHoursEnd(now));
}

/**
 * A RowStore that moves the data version of the projects written (see DataVersions) once
 * ClickHouse has the rows, so no cached answer outlives a write, and their closed-hours version
 * when the rows may hold events of closed hours (touchesClosedHours, at the clock's time once
 * the insert is done), carrying their latest-row stamps where the rows' latest `ts` is known
 * (latestRowsOf), then tells `afterMove` (the answer cache, which computes recently asked
 * answers again). A failed insert moves nothing.
 */
export function versionedRowStore(store: RowStore, versions: DataVersions, clock: Clock, afterMove?: (projectIds: readonly string[] | 'all') => void): RowStore {
  return {
    async insert(table, rows, opts) {
      await store.insert(table, rows, opts);
      const projects = projectsOf(rows);
      await versions.moved(projects, { closedHours: touchesClosedHours(table, rows, clock.now()), latestRows: latestRowsOf(rows, projects) });
      afterMove?.(projects);
    },
    ping: () => store.ping(),
    ...(store.rowBinaryTypes ? { rowBinaryTypes: (table: string) => store.rowBinaryTypes!(table) } : {}),
  };
}
