import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withQuery, type ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { coalescedReads } from '../../src/adapters/coalesced-reads.js';
import { chdbConnector } from '../../src/adapters/node-clickhouse.js';
import { carriedValues, readsBeside } from '../../src/adapters/reads-beside.js';
import { closeHarness, createHarness, TEST_DATA_DIR, type Harness } from '../helpers/harness.js';

type Read = Parameters<ClickHouseClient['query']>[0];

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await closeHarness();
});

const rowsOf = async (client: ClickHouseClient, read: Read) => (await client.query(read)).json();

/** A bound read that keeps the chain busy for a few hundred milliseconds. */
const SLOW_ROWS = 10_000_000;
const slow: Read = {
  query: 'SELECT count() AS n FROM numbers({count:UInt64}) WHERE sipHash64(number, {salt:UInt64}) % 7 = 3',
  query_params: { count: SLOW_ROWS, salt: 1 },
  format: 'JSONEachRow',
};

/** Every placeholder type the reports bind, with values a request may bring. */
const hostile = [
  'plain',
  'lone \uD800 surrogate and \uDC00 another',
  'NUL \u0000 inside',
  "quote ' and \\' and back\\slash \\N \\t",
  'tab\tnewline\ncarriage\r',
  '{projectId:String} looks like a placeholder',
  'Über 😀',
  '',
];
const typedRead = (text: string, list: string[]): Read => ({
  query: `
SELECT {text:String} AS text, length({text:String}) AS bytes, {list:Array(String)} AS list, {at:DateTime64(3, 'UTC')} AS at,
       {day:DateTime('UTC')} AS day, {limit:UInt32} AS lim, {big:UInt64} AS big, {neg:Int64} AS neg, {flag:UInt8} AS flag,
       has({list:Array(String)}, {text:String}) AS listed`,
  query_params: { text, list, at: '2026-03-29 01:30:00.125', day: '2026-03-29 00:00:00', limit: 4_294_967_295, big: '18446744073709551615', neg: -42, flag: 1 },
  format: 'JSONEachRow',
});

/** `read` asked while `slow` runs in the chain: answered (or refused) beside it, before it ends. */
async function askedBeside(client: ClickHouseClient, read: Read): Promise<unknown> {
  let slowEnded = false;
  const first = rowsOf(client, slow).then((rows) => ((slowEnded = true), rows));
  await new Promise((resolve) => setImmediate(resolve));
  const answer = await rowsOf(client, read).then(
    (rows) => ({ rows }),
    (error: unknown) => ({ error }),
  );
  expect(slowEnded).toBe(false);
  // The slow read ends before the next one starts, so each call finds the chain as the first left it.
  await first;
  if ('error' in answer) throw answer.error;
  return answer.rows;
}

describe('a read asked while another runs', () => {
  it('runs beside it, without bound values, and answers as the bound read does for every type and hostile value', async () => {
    for (const text of hostile) {
      const read = typedRead(text, [text, "it's", 'a,b', '[x]', '']);
      const bound = await rowsOf(h.deps.clickhouse, read);
      expect(await askedBeside(h.deps.clickhouse, read)).toEqual(bound);
    }
    const empty = typedRead('x', []);
    expect(await askedBeside(h.deps.clickhouse, empty)).toEqual(await rowsOf(h.deps.clickhouse, empty));
  });

  it('reads the key range its values give, as a bound read does (the values are constants before key analysis)', async () => {
    await h.deps.clickhouse.command({ query: 'CREATE TABLE IF NOT EXISTS beside_keyed (k String, n UInt64) ENGINE = MergeTree ORDER BY k SETTINGS index_granularity = 128' });
    await h.deps.clickhouse.command({ query: "INSERT INTO beside_keyed SELECT toString(number % 1000), number FROM numbers(1000000)" });
    const read: Read = { query: 'SELECT count() AS rows, sum(n) AS total FROM beside_keyed WHERE k = {k:String}', query_params: { k: '123' }, format: 'JSONEachRow' };
    const statsOf = async (ask: () => Promise<unknown>) => {
      const before = await rowsOf(h.deps.clickhouse, { query: "SELECT value FROM system.events WHERE event = 'SelectedRows'", format: 'JSONEachRow' });
      const rows = await ask();
      const after = await rowsOf(h.deps.clickhouse, { query: "SELECT value FROM system.events WHERE event = 'SelectedRows'", format: 'JSONEachRow' });
      return { rows, selected: Number((after as { value: string }[])[0]!.value) - Number((before as { value: string }[])[0]!.value) };
    };
    const bound = await statsOf(() => rowsOf(h.deps.clickhouse, read));
    const beside = await statsOf(() => askedBeside(h.deps.clickhouse, read));
    expect(beside.rows).toEqual(bound.rows);
    expect(bound.rows).toEqual([{ rows: '1000', total: String(Array.from({ length: 1000 }, (_, i) => 123 + i * 1000).reduce((a, b) => a + b, 0)) }]);
    // The slow read beside it selects SLOW_ROWS rows of numbers(); the keyed read a few granules of its 1M.
    expect(beside.selected - SLOW_ROWS).toBeLessThan(100_000);
    expect(bound.selected).toBeLessThan(100_000);
  });

  it("gives the bound read's own error for a bad value (asked again in the chain), and the next read still goes beside", async () => {
    const bad: Read = { query: 'SELECT {n:UInt32} AS n', query_params: { n: 'not a number' }, format: 'JSONEachRow' };
    const boundError = await rowsOf(h.deps.clickhouse, bad).then(() => null, (e: unknown) => String(e));
    expect(boundError).toMatch(/not a number|parse|Cannot/i);
    const first = rowsOf(h.deps.clickhouse, slow);
    await new Promise((resolve) => setImmediate(resolve));
    const besideError = await rowsOf(h.deps.clickhouse, bad).then(() => null, (e: unknown) => String(e));
    await first;
    expect(besideError).toBe(boundError);
    expect(await askedBeside(h.deps.clickhouse, { query: 'SELECT {n:UInt32} AS n', query_params: { n: 7 }, format: 'JSONEachRow' })).toEqual([{ n: 7 }]);
  });

  it('is asked in the chain when the beside connection refuses it (its table of values gone), and answers as bound', async () => {
    // A connection to the same engine without the temporary table: every statement sent beside fails.
    const connect = await chdbConnector(join(TEST_DATA_DIR, 'clickhouse'));
    const broken = connect({});
    let triedBeside = 0;
    const client = readsBeside(h.deps.clickhouse, {
      client: broken.client,
      rawInsert: (params) => {
        triedBeside++;
        return broken.connection.chdb.rawInsert(params);
      },
    });
    try {
      const read = typedRead('fallback', ['fallback']);
      const first = rowsOf(client, slow);
      await new Promise((resolve) => setImmediate(resolve));
      const answer = await rowsOf(client, read);
      await first;
      expect(triedBeside).toBe(1);
      expect(answer).toEqual(await rowsOf(h.deps.clickhouse, read));
    } finally {
      await broken.client.close();
    }
  });

  it('from users, arriving while a statement runs, go at once as a second statement that is answered before the first ends', async () => {
    const sent: string[] = [];
    const counting = withQuery(h.deps.clickhouse, (params) => {
      sent.push(params.query);
      return h.deps.clickhouse.query(params);
    });
    const client = coalescedReads(counting, { statementsAtOnce: 2 });
    let slowEnded = false;
    const first = rowsOf(client, slow).then(() => (slowEnded = true));
    await new Promise((resolve) => setImmediate(resolve));
    const reads = [typedRead('a', ['a']), typedRead('b', [])];
    const together = await Promise.all(reads.map((read) => rowsOf(client, read)));
    expect(slowEnded).toBe(false);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.match(/ AS read, /g)).toHaveLength(2);
    await first;
    const alone: unknown[] = [];
    for (const read of reads) alone.push(await rowsOf(h.deps.clickhouse, read));
    expect(together).toEqual(alone);
  });
});

describe('carriedValues', () => {
  it('puts no value into the statement, each name once into the rows, and leaves a read naming a missing value bound', () => {
    const read = typedRead("x' OR 1=1 --", ["y'); DROP TABLE events; --"]);
    const carried = carriedValues(read)!;
    expect(carried.query).not.toContain('OR 1=1');
    expect(carried.query).not.toContain('DROP TABLE');
    expect(carried.query).not.toMatch(/\{[a-z]+:/);
    const rows = carried.rows.toString().trim().split('\n').map((line) => JSON.parse(line) as { name: string; value: string });
    expect(rows.map((r) => r.name).sort()).toEqual(['at', 'big', 'day', 'flag', 'limit', 'list', 'neg', 'text']);
    expect(rows.find((r) => r.name === 'text')!.value).toBe("x' OR 1=1 --");
    expect(carriedValues({ query: 'SELECT {a:String} AS a, {b:String} AS b', query_params: { a: 'x' }, format: 'JSONEachRow' })).toBeNull();
    expect(carriedValues({ query: 'SELECT 1', query_params: {}, format: 'JSONEachRow' })).toBeNull();
    // Values without a text here stay bound: null, an object, a number that is not finite, inside an array too.
    for (const odd of [null, { a: 1 }, Number.NaN, ['x', null]]) {
      expect(carriedValues({ query: 'SELECT {v:String} AS v', query_params: { v: odd }, format: 'JSONEachRow' })).toBeNull();
    }
    expect(carriedValues({ query: 'SELECT {v:UInt64} AS v', query_params: { v: 18446744073709551615n }, format: 'JSONEachRow' })!.rows.toString()).toBe(
      '{"name":"v","value":"18446744073709551615"}\n',
    );
  });
});
