import { isPlainJsonSelect, sqlString, withQuery, type ClickHouseClient } from './clickhouse.js';
import type { ChdbRawInsert } from './embedded-row-store.js';

type QueryParams = Parameters<ClickHouseClient['query']>[0];
type Answer = Awaited<ReturnType<ClickHouseClient['query']>>;

/** The temporary table a beside connection is given its statements' values in: one row per parameter name. */
const BOUND_VALUES_TABLE = 'bound_values';

/**
 * Made once on the beside connection (temporary: it lives and dies with that connection's
 * session). A Join table keyed by name answers `joinGet` lookups, and with
 * `join_any_take_last_row` each statement's rows replace the previous statement's values.
 */
export const CREATE_BOUND_VALUES = `CREATE TEMPORARY TABLE IF NOT EXISTS ${BOUND_VALUES_TABLE} (name String, value String)
ENGINE = Join(ANY, LEFT, name) SETTINGS join_any_take_last_row = 1, persistent = 0`;

/** A connection of the embedded engine that runs statements without bound values, and takes rows without SQL. */
export interface BesideConnection {
  client: ClickHouseClient;
  rawInsert: ChdbRawInsert;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g;

/** A string as the engine reads it back: lone surrogates become U+FFFD, as when a bound value is encoded to UTF-8. */
const wellFormed = (s: string): string => s.toWellFormed();

/**
 * A bound value as the text its placeholder's type is cast from. Strings stay as they are (a
 * cast from String to String keeps every byte); an array is written in the engine's text form
 * of arrays, which the cast parses as data: the text never becomes part of a statement.
 */
function valueText(value: unknown): string | undefined {
  if (typeof value === 'string') return wellFormed(value);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (!Array.isArray(value)) return undefined;
  const items = value.map((v) => (typeof v === 'string' ? sqlString(wellFormed(v)) : valueText(v)));
  return items.every((item) => item !== undefined) ? `[${items.join(',')}]` : undefined;
}

/**
 * `params` as a statement without bound values and the rows that carry them: each `{name:Type}`
 * becomes a cast of `joinGet` from BOUND_VALUES_TABLE, which the engine folds into a constant
 * before key analysis, as it does a bound value. Names and types are the statement's own (this
 * program's SQL); the values travel only as rows. Null when a placeholder names no parameter, or
 * a value has no text here (null, an object): the bound path then answers as it always has.
 */
export function carriedValues(params: QueryParams): { query: string; rows: Buffer } | null {
  const bound = params.query_params ?? {};
  const names = new Set<string>();
  let missing = false;
  const query = params.query.replace(PLACEHOLDER, (_, name: string, type: string) => {
    if (!Object.hasOwn(bound, name)) missing = true;
    names.add(name);
    return `CAST(joinGet(${BOUND_VALUES_TABLE}, 'value', ${sqlString(name)}), ${sqlString(type)})`;
  });
  if (missing || names.size === 0) return null;
  const rows: string[] = [];
  for (const name of names) {
    const value = valueText(bound[name]);
    if (value === undefined) return null;
    rows.push(JSON.stringify({ name, value }));
  }
  return { query, rows: Buffer.from(`${rows.join('\n')}\n`) };
}

/**
 * The embedded engine runs statements with bound values one at a time in the whole process
 * (chdb's one chain of them: README "Where the computed time goes"), so two reads never overlap,
 * even on two connections, and the second core waits while one statement is planned. This
 * client sends each read to `chained` (bound, as ever), but a read that arrives while one of its
 * reads runs there goes to `beside` instead when that is free: unbound, with its values carried as
 * rows (carriedValues), so it runs beside the one in the chain. A read alone pays nothing for it;
 * a read refused beside is asked again in the chain, so each caller gets the bound read's answer or error.
 */
export function readsBeside(chained: ClickHouseClient, beside: BesideConnection): ClickHouseClient {
  let chainedRunning = 0;
  let besideRunning = false;
  const onChain = async (params: QueryParams): Promise<Answer> => {
    chainedRunning++;
    try {
      return await chained.query(params);
    } finally {
      chainedRunning--;
    }
  };
  const besideChain = async (params: QueryParams, carried: { query: string; rows: Buffer }): Promise<Answer> => {
    besideRunning = true;
    try {
      await beside.rawInsert({ table: BOUND_VALUES_TABLE, values: carried.rows, format: 'JSONEachRow', columns: ['name', 'value'] });
      const { query_params: _bound, ...unbound } = params;
      return await beside.client.query({ ...unbound, query: carried.query });
    } catch {
      // Whatever refused it (a bad value, or the beside connection itself), the bound read answers as it always has.
      return onChain(params);
    } finally {
      besideRunning = false;
    }
  };
  return withQuery(chained, (params) => {
    // Only a plain JSON SELECT with bound values may go beside (carriedValues answers null without any).
    const carried = chainedRunning > 0 && !besideRunning && isPlainJsonSelect(params) ? carriedValues(params) : null;
    return carried ? besideChain(params, carried) : onChain(params);
  });
}
