import type { ClickHouseClient } from '../adapters/clickhouse.js';
import { toClickHouseDateTime64 } from '../adapters/clickhouse-time.js';
import { VitalsMark } from './vitals-mark.js';

/** Vitals events stamped before the mark, in either table. */
const BEFORE_MARK = "ts < {mark:DateTime64(3, 'UTC')}";
const IN_EVENTS = `FROM events WHERE kind = 'vitals' AND ${BEFORE_MARK}`;
const IN_VITALS = `FROM vitals WHERE ${BEFORE_MARK}`;
/** A count and an order-free checksum of rows, to compare the two tables' copies. */
const TALLY = "SELECT count() AS rows, toString(sum(cityHash64(project_id, ts, visitor_id, session_id, path, lcp, inp, cls, fcp, ttfb))) AS checksum";
const DELETE_BELOW_MARK = `ALTER TABLE vitals DELETE WHERE ${BEFORE_MARK}`;
const COPY_BELOW_MARK = `INSERT INTO vitals SELECT * ${IN_EVENTS}`;
const TALLY_EVENTS = `${TALLY} ${IN_EVENTS}`;
const TALLY_VITALS = `${TALLY} ${IN_VITALS}`;
const MARK_ZERO = "INSERT INTO vitals_since SELECT toDateTime64(0, 3, 'UTC')";

/** What moveVitalsHistory did: rows copied, and the mark it lowered (ISO; null when it was 0 already). */
export interface VitalsHistoryMove {
  moved: number;
  previousMark: string | null;
}

/** The copies of the two tables differ: something wrote vitals stamped before the mark while they were copied. */
export class VitalsHistoryMismatch extends Error {}

/**
 * Copies the vitals events stamped before the mark of migration 0028 from `events` into `vitals`,
 * then lowers the mark to 0, so that every period's performance reads `vitals` alone (README
 * "Vitals apart"). Until the new mark is stored no read looks at `vitals` below the old one, so
 * each step is invisible to readers, and a run cut short is simply run again: it first deletes
 * everything below the mark in `vitals` (a partial copy, and the view's copies of history
 * imported after the upgrade, which `events` holds too), then copies. The copy is checked against
 * `events` before the mark moves. Meant as an operator's one-off step with nothing else writing
 * history meanwhile (the embedded engine's store cannot be opened while the server runs); a
 * process that read the old mark keeps reading correctly with it.
 */
export async function moveVitalsHistory(clickhouse: ClickHouseClient): Promise<VitalsHistoryMove> {
  const mark = await new VitalsMark().since(clickhouse);
  if (mark === undefined) throw new Error('no vitals mark is stored: migration 0028 has not run on this store');
  if (mark === 0) return { moved: 0, previousMark: null };
  const params = { mark: toClickHouseDateTime64(mark) };
  await clickhouse.command({ query: DELETE_BELOW_MARK, query_params: params, clickhouse_settings: { mutations_sync: '2' } });
  await clickhouse.command({ query: COPY_BELOW_MARK, query_params: params });
  const [source, copy] = await Promise.all([tally(clickhouse, TALLY_EVENTS, params), tally(clickhouse, TALLY_VITALS, params)]);
  if (source.rows !== copy.rows || source.checksum !== copy.checksum) {
    throw new VitalsHistoryMismatch(
      `the copy of the vitals before the mark differs from events (${copy.rows} rows against ${source.rows}): vitals stamped before the mark were written meanwhile; the mark stays, run it again with no import running`,
    );
  }
  await clickhouse.command({ query: MARK_ZERO });
  return { moved: Number(source.rows), previousMark: new Date(mark).toISOString() };
}

async function tally(clickhouse: ClickHouseClient, query: string, params: { mark: string }): Promise<{ rows: string; checksum: string }> {
  const result = await clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  const [row] = await result.json<{ rows: string; checksum: string }>();
  return row!;
}
