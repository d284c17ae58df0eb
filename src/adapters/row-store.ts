import type { ClickHouseClient } from './clickhouse.js';

/**
 * The write path's one port: how Sightline stores rows, whatever holds them. Two
 * implementations: serverRowStore (a ClickHouse server over HTTP, Node or Workers) and
 * embeddedRowStore (the embedded engine, with its raw inserts, spool files and RowBinary).
 * Queries and schema changes go to the ClickHouse client itself.
 */
export interface RowStore {
  /** Inserts `rows` into `table`; resolves once ClickHouse has them, rejects with its error. */
  insert(table: string, rows: Rows, opts?: InsertOptions): Promise<void>;
  /** Whether ClickHouse answers at all (told apart from refusing what it was sent). */
  ping(): Promise<boolean>;
  /**
   * Present when the store takes RowBinary rows (the embedded engine): the column types of
   * `table`, to build the encoder from (see rowBinaryEncoder). Other stores take JSON rows.
   */
  rowBinaryTypes?(table: string): Promise<Map<string, string>>;
}

/** Row objects (column name → value; undefined fields take the column default), or rows already encoded. */
export type Rows = readonly Record<string, unknown>[] | EncodedRows;

/**
 * Rows the caller already encoded, one after the other: JSONEachRow lines (each ending in a
 * newline) or RowBinary (only for a store with `rowBinaryTypes`). Encoding rows as they arrive
 * spreads that cost instead of blocking the event loop for a whole batch at insert time.
 */
export class EncodedRows {
  readonly body: string | Uint8Array;
  /** The columns each row holds, in order (RowBinary has no names). */
  readonly columns: readonly string[];
  readonly format: 'JSONEachRow' | 'RowBinary';
  /** The projects the rows belong to, when the encoder kept them (moves their data versions; unknown moves every project's). */
  readonly projectIds?: readonly string[];
  /** The earliest `ts` among the rows as stored text, when the encoder kept it (see versioned-row-store.ts touchesClosedHours). */
  readonly earliest?: string;
  /** The latest `ts` among the rows as stored text, when the encoder kept it (carries the projects' latest-row stamps: versioned-row-store.ts). */
  readonly latest?: string;

  constructor(rows: {
    body: string | Uint8Array;
    columns: readonly string[];
    format?: 'JSONEachRow' | 'RowBinary';
    projectIds?: readonly string[];
    earliest?: string;
    latest?: string;
  }) {
    this.body = rows.body;
    this.columns = rows.columns;
    this.format = rows.format ?? 'JSONEachRow';
    this.projectIds = rows.projectIds;
    this.earliest = rows.earliest;
    this.latest = rows.latest;
  }

  /** The body as bytes (UTF-8), without a copy when it already is. */
  bytes(): Uint8Array {
    return typeof this.body === 'string' ? Buffer.from(this.body) : this.body;
  }
}

export interface InsertOptions {
  /**
   * Same token for the same rows: a retried insert is then stored once, in the table and every
   * view. ClickHouse drops a block whose token it has seen inside the table's deduplication
   * window, and with `deduplicate_blocks_in_dependent_materialized_views` the rollups drop it too.
   */
  token: string;
  /** `basic` when every `ts` is already `YYYY-MM-DD hh:mm:ss.sss` (faster); default accepts any ISO form. */
  dateFormat?: 'basic' | 'best_effort';
  /**
   * A bulk load (an import block): the rollup views are fed in parallel threads (faster, but it
   * competes with request handling), and the statement runs below every other statement's
   * priority, so the engine pauses it while reads run (see clickhouseSettings).
   */
  bulk?: boolean;
}

export type InsertSettings = NonNullable<Parameters<ClickHouseClient['insert']>[0]['clickhouse_settings']>;

/** The ClickHouse settings of an insert with these options (none without options: the connection's own). */
export function insertSettings(opts: InsertOptions | undefined): InsertSettings | undefined {
  if (!opts) return undefined;
  return {
    insert_deduplicate: 1,
    deduplicate_blocks_in_dependent_materialized_views: 1,
    insert_deduplication_token: opts.token,
    date_time_input_format: opts.dateFormat ?? 'best_effort',
    parallel_view_processing: opts.bulk ? 1 : 0,
    // Each view's SELECT already groups its block by the rollup key; merging the result again
    // on insert is redundant work (~8% of a bulk insert). Background merges still combine parts.
    optimize_on_insert: 0,
    // Tables are partitioned by month; an import block may span years of history (a part per
    // month and table), which the default limit of 100 would refuse as a whole.
    max_partitions_per_insert_block: '1000',
    ...(opts.bulk ? { priority: '2' } : {}),
  };
}

/** Whether ClickHouse answers a ping through `client`. */
export const pingOf = (client: ClickHouseClient) => async (): Promise<boolean> => (await client.ping()).success;

/** Sends encoded JSONEachRow `rows` (their columns in order) into `table`. */
export type InsertWithRows = (
  client: ClickHouseClient,
  target: { table: string; columns: readonly string[] },
  rows: Uint8Array,
  settings: InsertSettings | undefined,
) => Promise<void>;

/**
 * The rows read back into objects and sent through the client's own insert: what a client
 * without streamed insert bodies can do (client-web's `exec` drops its `values`). Costs a parse
 * per row; the Node client streams the encoded rows instead (see connectNodeClickHouse).
 */
export const rowsAsObjects: InsertWithRows = async (client, target, rows, settings) => {
  const values = new TextDecoder()
    .decode(rows)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  await client.insert({ table: target.table, values, columns: [...target.columns] as [string, ...string[]], format: 'JSONEachRow', clickhouse_settings: settings });
};

/**
 * A ClickHouse server over HTTP (@clickhouse/client on Node, client-web on Workers). Row objects
 * go through the client's insert; encoded JSON rows are sent by `insertWithRows`.
 */
export function serverRowStore(client: ClickHouseClient, insertWithRows: InsertWithRows): RowStore {
  return {
    async insert(table, rows, opts) {
      const clickhouse_settings = insertSettings(opts);
      if (!(rows instanceof EncodedRows)) {
        await client.insert({ table, values: rows as Record<string, unknown>[], format: 'JSONEachRow', clickhouse_settings });
        return;
      }
      if (rows.format !== 'JSONEachRow') throw new Error(`a ClickHouse server takes encoded rows as JSONEachRow, not ${rows.format}`);
      await insertWithRows(client, { table, columns: rows.columns }, rows.bytes(), clickhouse_settings);
    },
    ping: pingOf(client),
  };
}
