import type { ClickHouseClient } from '@clickhouse/client-common';

export type { ClickHouseClient };

/** Settings every Sightline connection uses, whatever the transport. */
export const clickhouseSettings = {
  // 64-bit ids travel as strings so they never lose precision in JS.
  output_format_json_quote_64bit_integers: 1,
  date_time_input_format: 'best_effort',
  // Our `x IN (SELECT …)` sets are of session ids, which no table is sorted by: built for index
  // analysis as well, such a set cost 620 ms where the lookup itself cost 110 (README "Analysis").
  use_index_for_in_with_subqueries: 0,
  // Everything the app sends runs at priority 1; a bulk import's blocks run at 2 (InsertOptions.bulk),
  // and the engine pauses a lower-priority statement while higher ones run (for at most
  // low_priority_query_wait_time_ms at a time), so a dashboard asked during an import gets the cores.
  priority: '1',
} as const;

/**
 * The embedded engine applies a client call's settings with `SET`, which outlives the call in its
 * connection's session; the client calls on a connection set them back (`oneCallSettings` in
 * call-settings.ts). chdb's raw insert bypasses the client and carries its settings in the
 * statement's `SETTINGS` clause, so a dedup token an earlier client call left in the session would
 * make it look like a duplicate and be dropped: its clause names these unless the insert sets its own.
 */
export const embeddedSessionResets = { insert_deduplication_token: '', parallel_view_processing: 0 } as const;

/**
 * One of this program's own constants (a rule's value, a spool file's path, a table's column
 * types) as a ClickHouse string literal. Never for a value a request brought: those are bound.
 */
export const sqlString = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

type Query = (params: Parameters<ClickHouseClient['query']>[0]) => ReturnType<ClickHouseClient['query']>;

/**
 * `client` with the members `replaced` gives (undefined for a member it keeps); every other
 * member is the client's own, bound to it.
 */
export function withMembers(client: ClickHouseClient, replaced: (member: PropertyKey) => unknown): ClickHouseClient {
  return new Proxy(client, {
    get(target, prop) {
      const replacement = replaced(prop);
      if (replacement !== undefined) return replacement;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `client` with its `query` replaced by `query`; every other member is the client's own, bound to it. */
export const withQuery = (client: ClickHouseClient, query: Query): ClickHouseClient => withMembers(client, (member) => (member === 'query' ? query : undefined));

const SELECT_STATEMENT = /^\s*(SELECT|WITH)\b/i;

/**
 * Whether a read is a SELECT answered as JSONEachRow that brings no settings, id or signal of its
 * own: one that may be sent another way than it came (combined with others, or beside the chain
 * of bound statements) and still be answered as asked.
 */
export function isPlainJsonSelect(params: Parameters<ClickHouseClient['query']>[0]): boolean {
  return (
    params.format === 'JSONEachRow' &&
    !params.clickhouse_settings &&
    !params.abort_signal &&
    !params.query_id &&
    !params.session_id &&
    typeof params.query === 'string' &&
    SELECT_STATEMENT.test(params.query)
  );
}

/** A plain SQL identifier: what may be written into a statement unquoted. */
export const isIdentifier = (name: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);

/**
 * `INSERT INTO table (columns)` for an insert whose rows travel apart from the statement. Table
 * and column names come from code (the ingest tables' closed column lists), and are checked
 * here all the same: an identifier that is not one is refused, never quoted into SQL.
 */
export function insertInto(table: string, columns: readonly string[] | undefined): string {
  for (const name of [table, ...(columns ?? [])]) {
    if (!isIdentifier(name)) throw new Error(`not an identifier: ${JSON.stringify(name)}`);
  }
  return columns?.length ? `INSERT INTO ${table} (${columns.join(', ')})` : `INSERT INTO ${table}`;
}
