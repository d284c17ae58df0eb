import { EncodedRows, type ClickHouseClient } from '../adapters/clickhouse.js';
import { ByteRows } from './byte-rows.js';

/** Columns of each ingest table that rows may set (a row leaves out those at their default). */
export const TABLE_COLUMNS = {
  events: [
    'project_id', 'ts', 'kind', 'visitor_id', 'session_id', 'hostname', 'path', 'referrer', 'referrer_source',
    'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'country_code', 'country_name', 'region',
    'city', 'asn', 'device', 'browser', 'browser_version', 'os', 'os_version', 'screen_width', 'event_name', 'props',
    'amount_cents', 'currency', 'duration_ms', 'lcp', 'inp', 'cls', 'fcp', 'ttfb',
  ],
  bot_hits: ['project_id', 'ts', 'bot_slug', 'bot_name', 'category', 'verified', 'path', 'status', 'user_agent'],
} as const;

export type IngestTable = keyof typeof TABLE_COLUMNS;

/**
 * A row as one JSONEachRow line (newline included), for `insertLines`. Fields that are undefined
 * are left out and take the column default (see eventRow).
 */
export function rowLine(row: Record<string, unknown>): string {
  return `${JSON.stringify(row)}\n`;
}

/** JSONEachRow lines gathered as UTF-8 bytes outside the JS heap (see ByteRows). */
export class RowBuffer extends ByteRows {
  append(row: Record<string, unknown>): void {
    const json = JSON.stringify(row);
    // UTF-8 takes at most 3 bytes per UTF-16 unit, plus the newline.
    this.reserve(json.length * 3 + 1);
    this.size += this.buf.write(json, this.size);
    this.buf[this.size++] = 0x0a;
    this.rows++;
  }
}

export interface InsertOptions {
  /** Same token for the same rows: a retried insert is then stored once, in the table and every view. */
  token: string;
  /** `basic` when every `ts` is already `YYYY-MM-DD hh:mm:ss.sss` (faster); default accepts any ISO form. */
  dateFormat?: 'basic' | 'best_effort';
  /** Feed the rollup views in parallel threads: faster bulk loads, but it competes with request handling. */
  parallelViews?: boolean;
  /** Column values every row shares, left out of the encoded rows (see EncodedRows). */
  constants?: Readonly<Record<string, string>>;
  /** How `body` is encoded: JSONEachRow lines (default), or RowBinary where rowBinaryColumnTypes allows it. */
  format?: 'JSONEachRow' | 'RowBinary';
}

/**
 * Inserts rows encoded by `rowLine` (joined, or gathered in a RowBuffer), with a deduplication token (Node clients only, see
 * EncodedRows). ClickHouse drops a block whose token it has seen inside the table's deduplication
 * window, and with `deduplicate_blocks_in_dependent_materialized_views` the rollups drop it too.
 */
export async function insertLines(ch: ClickHouseClient, table: IngestTable, body: string | Uint8Array, opts: InsertOptions): Promise<void> {
  if (body.length === 0) return;
  await ch.insert({
    table,
    values: new EncodedRows(body, opts.constants) as never,
    columns: [...TABLE_COLUMNS[table]] as [string, ...string[]],
    // RowBinary is not among the client's DataFormat names; the Node adapters take it (see EncodedRows).
    format: (opts.format ?? 'JSONEachRow') as 'JSONEachRow',
    clickhouse_settings: {
      insert_deduplicate: 1,
      deduplicate_blocks_in_dependent_materialized_views: 1,
      insert_deduplication_token: opts.token,
      date_time_input_format: opts.dateFormat ?? 'best_effort',
      parallel_view_processing: opts.parallelViews ? 1 : 0,
      // Each view's SELECT already groups its block by the rollup key; merging the result again
      // on insert is redundant work (~8% of a bulk insert). Background merges still combine parts.
      optimize_on_insert: 0,
      // Tables are partitioned by month; an import block may span years of history (a part per
      // month and table), which the default limit of 100 would refuse as a whole.
      max_partitions_per_insert_block: '1000',
    },
  });
}

const DAY_MS = 86_400_000;
/** Years 0000–9999 print as four digits; outside them toISOString's extended form is used. */
const MAX_PLAIN_MS = 253_402_300_800_000;
const pad = (width: number, n: number) => Array.from({ length: n }, (_, i) => String(i).padStart(width, '0'));
const PAD2 = pad(2, 60);
const PAD3 = pad(3, 1000);
// Imports and live traffic arrive in time order, so the date part is nearly always the last one.
let lastDay = Number.NaN;
let lastDayPrefix = '';

function isoTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

/**
 * Formats epoch ms as the `basic` DateTime64(3) text ClickHouse parses fastest. The same text as
 * `toISOString` would give, built from the cached day and integer arithmetic: at a million rows an
 * import spent ~0.7 s in the Date round trip.
 */
export function chTimestamp(ms: number): string {
  const t = Math.trunc(ms);
  if (!(t >= 0 && t < MAX_PLAIN_MS)) return isoTimestamp(t);
  const day = Math.floor(t / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayPrefix = `${new Date(day * DAY_MS).toISOString().slice(0, 10)} `;
  }
  let rest = t - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  return `${lastDayPrefix}${PAD2[h]}:${PAD2[m]}:${PAD2[s]}.${PAD3[rest - s * 1000]}`;
}
