import type { ClickHouseClient } from '@clickhouse/client-common';

export type { ClickHouseClient };

/** Settings every Sightline connection uses, whatever the transport. */
export const clickhouseSettings = {
  // 64-bit ids travel as strings so they never lose precision in JS.
  output_format_json_quote_64bit_integers: 1,
  date_time_input_format: 'best_effort',
} as const;

/**
 * The embedded engine applies per-call settings with `SET`, which outlives the call in its one
 * session. A dedup token left behind would make every later insert look like a duplicate and be
 * dropped, so each statement resets it unless the call sets its own.
 */
const embeddedSessionResets = { insert_deduplication_token: '' } as const;

export interface NodeClickHouseOptions {
  url?: string;
  username?: string;
  password?: string;
  database?: string;
  /** Data directory of the embedded engine, used when `url` is not set. */
  dataDir: string;
}

/**
 * Connects the Node runtime: a ClickHouse server over HTTP when a URL is given, otherwise the
 * embedded engine (chdb) storing its data under `dataDir`. Both speak the same client API.
 */
export async function connectNodeClickHouse(opts: NodeClickHouseOptions): Promise<ClickHouseClient> {
  const { createClient } = await import('@clickhouse/client');
  if (opts.url) {
    return createClient({
      url: opts.url,
      username: opts.username,
      password: opts.password,
      database: opts.database,
      clickhouse_settings: clickhouseSettings,
    }) as unknown as ClickHouseClient;
  }
  const { mkdirSync } = await import('node:fs');
  const { resolve } = await import('node:path');
  const path = resolve(opts.dataDir, 'clickhouse');
  mkdirSync(path, { recursive: true });
  const { createChdbConnection } = await import('chdb/connection');
  return createClient({
    // chdb's Connection is structurally the client's; the published types differ only nominally.
    connection: createChdbConnection({ path }) as never,
    clickhouse_settings: { ...clickhouseSettings, ...embeddedSessionResets },
  } as never) as unknown as ClickHouseClient;
}
