import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseSettings } from '../../src/adapters/clickhouse.js';
import { connectNodeClickHouse, type NodeClickHouse } from '../../src/adapters/node-clickhouse.js';

const dataDir = join(tmpdir(), `sightline-session-settings-${process.pid}`);
let ch: NodeClickHouse;

beforeAll(async () => {
  ch = await connectNodeClickHouse({ dataDir });
});
afterAll(async () => {
  await ch.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The value of a setting in the session that answers a plain read. */
const setting = async (name: string): Promise<unknown> => {
  const rs = await ch.client.query({ query: 'SELECT getSetting({name:String}) AS value', query_params: { name }, format: 'JSONEachRow' });
  return ((await rs.json()) as { value: unknown }[])[0]!.value;
};

/** The statements the engine has interpreted in this process (every `SET` counts as one). */
const statementsSoFar = async (): Promise<number> => {
  const rs = await ch.client.query({ query: "SELECT value FROM system.events WHERE event = 'Query'", format: 'JSONEachRow' });
  return Number(((await rs.json()) as { value: string }[])[0]?.value ?? 0);
};

describe('the embedded engine’s session settings', () => {
  it('answers a read with the app’s settings, set once when the connection opened', async () => {
    expect(await setting('output_format_json_quote_64bit_integers')).toBe(true);
    expect(await setting('use_index_for_in_with_subqueries')).toBe(false);
    expect(await setting('date_time_input_format')).toBe(clickhouseSettings.date_time_input_format);
    expect(String(await setting('priority'))).toBe(clickhouseSettings.priority);
    // 64-bit integers still come back as strings (the reason for the first setting).
    const rs = await ch.client.query({ query: 'SELECT toUInt64(18446744073709551615) AS n', format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ n: '18446744073709551615' }]);
  });

  it('sends a read to the engine as one statement, with no SET before it', async () => {
    const before = await statementsSoFar();
    await (await ch.client.query({ query: 'SELECT {n:UInt8} AS n', query_params: { n: 1 }, format: 'JSONEachRow' })).json();
    await (await ch.client.query({ query: 'SELECT 2 AS n', format: 'JSONEachRow', clickhouse_settings: {} })).json();
    // The two reads and the second count itself.
    expect((await statementsSoFar()) - before).toBe(3);
  });

  it('applies a call’s own settings to that call only, never to later reads', async () => {
    const threads = await setting('max_threads');
    const mutationsSync = await setting('mutations_sync');
    const own = await ch.client.query({ query: "SELECT getSetting('max_threads') AS value", format: 'JSONEachRow', clickhouse_settings: { max_threads: 7 } });
    expect(((await own.json()) as { value: unknown }[])[0]!.value).toBe(7);
    await ch.client.command({ query: 'SELECT 1', clickhouse_settings: { max_threads: 5, mutations_sync: '2', insert_deduplication_token: 'left-behind' } });
    expect(await setting('max_threads')).toBe(threads);
    expect(await setting('mutations_sync')).toBe(mutationsSync);
    expect(await setting('insert_deduplication_token')).toBe('');
  });

  it('applies a call’s own settings to that call only, never to a later call that brings settings of its own', async () => {
    const threads = await setting('max_threads');
    const mutationsSync = await setting('mutations_sync');
    const ownValue = async (name: string, own: Record<string, string | number>) => {
      const rs = await ch.client.query({ query: 'SELECT getSetting({name:String}) AS value', query_params: { name }, format: 'JSONEachRow', clickhouse_settings: own });
      return ((await rs.json()) as { value: unknown }[])[0]!.value;
    };
    await ch.client.command({ query: 'SELECT 1', clickhouse_settings: { max_threads: 3, mutations_sync: '2', max_result_rows: '1', result_overflow_mode: 'throw' } });
    expect(await ownValue('mutations_sync', { max_execution_time: 60 })).toBe(mutationsSync);
    expect(await ownValue('max_threads', { max_execution_time: 60 })).toBe(threads);
    expect(await ownValue('max_threads', { max_threads: 1 })).toBe(1);
    // A limit one call set would refuse a later call's answer.
    const five = await ch.client.query({ query: 'SELECT number FROM numbers(5)', format: 'JSONEachRow', clickhouse_settings: { max_execution_time: 60 } });
    expect(await five.json()).toHaveLength(5);
    // The app's own settings stay those of every call.
    expect(String(await ownValue('priority', { max_execution_time: 60 }))).toBe(clickhouseSettings.priority);
  });

  it('keeps the app’s settings after a read fails', async () => {
    await expect(ch.client.query({ query: 'SELECT no_such_column FROM system.one', format: 'JSONEachRow' })).rejects.toThrow();
    expect(await setting('output_format_json_quote_64bit_integers')).toBe(true);
    expect(String(await setting('priority'))).toBe(clickhouseSettings.priority);
  });
});
