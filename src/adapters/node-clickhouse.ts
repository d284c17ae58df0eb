import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { clickhouseSettings, insertInto, type ClickHouseClient } from './clickhouse.js';
import { callMember, oneCallSettings, withSettingsCalls } from './call-settings.js';
import { coalescedReads } from './coalesced-reads.js';
import { directorySpool, embeddedRowStore } from './embedded-row-store.js';
import { CREATE_BOUND_VALUES, readsBeside } from './reads-beside.js';
import { serverRowStore, type InsertWithRows, type RowStore } from './row-store.js';

export interface NodeClickHouseOptions {
  url?: string;
  username?: string;
  password?: string;
  database?: string;
  /** Data directory of the embedded engine, used when `url` is not set. */
  dataDir: string;
  /** Embedded engine: send a read asked while another runs beside it (readsBeside). Default true. */
  readsBeside?: boolean;
}

/** ClickHouse for the Node runtime: the client for queries and schema, and the row store for inserts. */
export interface NodeClickHouse {
  client: ClickHouseClient;
  rowStore: RowStore;
  /**
   * Closes the client and, on the embedded engine, waits for the work still running in it: an
   * insert whose caller stopped waiting goes on inside the engine, and a process that exits
   * under it crashes (SIGSEGV) instead of exiting with its code. What an entry point closes at
   * shutdown; `client.close()` alone does not wait.
   */
  close(): Promise<void>;
}

/** The Node client sends the rows as a stream after the statement, without turning them into a string. */
const streamedRows: InsertWithRows = async (client, target, rows, settings) => {
  const query = `${insertInto(target.table, target.columns)} FORMAT JSONEachRow`;
  const result = await client.exec({ query, values: Readable.from([rows], { objectMode: false }), clickhouse_settings: settings });
  // An INSERT answers with an empty body; read it to the end so the socket goes back to the pool.
  for await (const _ of result.stream as AsyncIterable<unknown>);
};

/** Whether a call brings ClickHouse settings of its own. */
const bringsSettings = (params: unknown): boolean => {
  const settings = (params as { clickhouse_settings?: object } | undefined)?.clickhouse_settings;
  return settings !== undefined && Object.keys(settings).length > 0;
};

/**
 * A client that sends each call bringing settings of its own to `withOwnSettings`, and every
 * other call to `plain`. The embedded engine applies a call's settings as `SET` statements in
 * its connection's session, where they outlive the call, and each one a statement carries costs
 * the engine ~0.2 ms (README "Performance"). So the connection that answers reads is given the
 * app's settings once, no call ever changes them, and a read goes as its statement alone.
 */
export function settingsApart(plain: ClickHouseClient, withOwnSettings: ClickHouseClient): ClickHouseClient {
  return withSettingsCalls(plain, (member, params) => callMember(bringsSettings(params) ? withOwnSettings : plain, member, params));
}

/**
 * Connects the Node runtime: a ClickHouse server over HTTP when a URL is given, otherwise the
 * embedded engine (chdb) storing its data under `dataDir`. Both speak the same client API; each
 * has its own row store.
 */
export async function connectNodeClickHouse(opts: NodeClickHouseOptions): Promise<NodeClickHouse> {
  const { createClient } = await import('@clickhouse/client');
  if (opts.url) {
    const client = createClient({
      url: opts.url,
      username: opts.username,
      password: opts.password,
      database: opts.database,
      clickhouse_settings: clickhouseSettings,
    }) as unknown as ClickHouseClient;
    return { client, rowStore: serverRowStore(client, streamedRows), close: () => client.close() };
  }
  const path = resolve(opts.dataDir, 'clickhouse');
  mkdirSync(path, { recursive: true });
  const { drainPending } = await import('chdb');
  const connect = await chdbConnector(path);
  const reads = await embeddedReads(connect, { readsBeside: opts.readsBeside ?? true });
  // Inserts go on a connection of their own: a connection runs one statement at a time, and an
  // insert (unbound, so outside chdb's one chain of bound statements: a live batch's raw rows, an
  // import block's spool file) would hold every read asked meanwhile (README "Where the computed
  // time goes").
  const writes = connect(clickhouseSettings);
  // Bulk bodies are handed over as files (see embeddedRowStore).
  const spool = directorySpool(resolve(opts.dataDir, 'insert-spool'));
  const close = async () => {
    await Promise.all([reads.close(), writes.client.close()]);
    await drainPending();
  };
  return { client: reads.client, rowStore: embeddedRowStore(oneCallSettings(writes.client, clickhouseSettings), writes.connection.chdb.rawInsert, spool), close };
}

type ChdbConnection = ReturnType<typeof import('chdb/connection').createChdbConnection>;
/** Makes a connection to the embedded engine whose client sends `everyCall` with every call (a call's own settings override them). */
type ChdbConnect = (everyCall: Record<string, string | number>) => { connection: ChdbConnection; client: ClickHouseClient };

/** A ChdbConnect for the engine's data directory `path`. */
export async function chdbConnector(path: string): Promise<ChdbConnect> {
  const { createClient } = await import('@clickhouse/client');
  const { createChdbConnection } = await import('chdb/connection');
  return (everyCall) => {
    const connection = createChdbConnection({ path });
    const client = createClient({
      // chdb's Connection is structurally the client's; the published types differ only nominally.
      connection: connection as never,
      clickhouse_settings: everyCall,
    } as never) as unknown as ClickHouseClient;
    return { connection, client };
  };
}

/**
 * The fewest distinct reads a statement takes when users' reads waiting are shared between the two
 * places (coalescedReads' evenShare; README "Even shares"): fewer would send statements of one or
 * two reads, each paying the engine's fixed cost of a statement.
 */
export const EVEN_SHARE_AT_LEAST = 4;

/**
 * The embedded engine's client for reads and schema. Reads go on a connection given the app's
 * settings once, and calls that bring settings of their own on a second (settingsApart). The
 * engine runs one bound statement at a time: reads that wait together go as one, and with
 * `readsBeside` a second statement runs beside the first on a third connection, its values carried
 * as rows (readsBeside).
 */
export async function embeddedReads(
  connect: ChdbConnect,
  /** `evenShare` (default true): coalescedReads' evenShare of EVEN_SHARE_AT_LEAST with reads beside; false sends every read waiting in one statement. */
  opts: { readsBeside: boolean; evenShare?: boolean },
): Promise<{ client: ClickHouseClient; close(): Promise<void> }> {
  const opened: ClickHouseClient[] = [];
  /** A connection given the app's settings once, whose calls then go as their statements alone. */
  const settledConnection = async () => {
    const made = connect({});
    opened.push(made.client);
    await made.client.command({ query: 'SELECT 1', clickhouse_settings: clickhouseSettings });
    return made;
  };
  const reads = await settledConnection();
  const ownSettings = connect(clickhouseSettings);
  opened.push(ownSettings.client);
  const close = async () => {
    await Promise.all(opened.map((c) => c.close()));
  };
  const bound = settingsApart(reads.client, oneCallSettings(ownSettings.client, clickhouseSettings));
  if (!opts.readsBeside) return { client: coalescedReads(bound), close };
  const beside = await settledConnection();
  await beside.client.command({ query: CREATE_BOUND_VALUES });
  const client = coalescedReads(readsBeside(bound, { client: beside.client, rawInsert: beside.connection.chdb.rawInsert }), {
    statementsAtOnce: 2,
    ...(opts.evenShare === false ? {} : { evenShare: EVEN_SHARE_AT_LEAST }),
  });
  return { client, close };
}
