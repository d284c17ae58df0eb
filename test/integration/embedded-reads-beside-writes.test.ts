import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNodeClickHouse, type NodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { EncodedRows, type InsertOptions, type Rows } from '../../src/adapters/row-store.js';

const dataDir = join(tmpdir(), `sightline-reads-beside-writes-${process.pid}`);
let ch: NodeClickHouse;

beforeAll(async () => {
  ch = await connectNodeClickHouse({ dataDir });
  await ch.client.command({ query: 'CREATE TABLE batch_rows (n UInt64) ENGINE = MergeTree ORDER BY n' });
  // A view with real work per row, so an insert lasts long enough to ask a read inside it (less
  // per row for the bulk case's rows, numbered from 1,000,000, which are seven times as many).
  await ch.client.command({
    query: `CREATE MATERIALIZED VIEW batch_rows_work ENGINE = MergeTree ORDER BY n
            AS SELECT n, arraySum(arrayMap(x -> cityHash64(x, n), range(if(n >= 1000000, 30, 200)))) AS h FROM batch_rows`,
  });
});
afterAll(async () => {
  await ch?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Runs `ask` 50 ms into the insert of `rows` (the insert still running then), and answers whether
 * it was done before the insert ended; every row must arrive. `ask` is told whether the insert is
 * still running.
 */
async function askedDuringInsert(
  rows: Rows,
  count: number,
  ask: (insertRunning: () => boolean) => Promise<void>,
  opts?: InsertOptions,
): Promise<boolean> {
  const before = await stored();
  let insertEnded = false;
  const insert = ch.rowStore.insert('batch_rows', rows, opts).then(() => (insertEnded = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(insertEnded).toBe(false);
  await ask(() => !insertEnded);
  const answeredDuringInsert = !insertEnded;
  await insert;
  expect(await stored()).toBe(before + count);
  return answeredDuringInsert;
}

/** Whether a bound read asked while `rows` are inserted is answered before the insert ends (and every row arrives). */
const readAnsweredDuringInsert = (rows: Rows, count: number) =>
  askedDuringInsert(rows, count, async () => {
    const rs = await ch.client.query({ query: 'SELECT count() AS n FROM system.one WHERE dummy < {limit:UInt8}', query_params: { limit: 1 }, format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ n: '1' }]);
  });

/** `count` JSON rows numbered from `first`: at least 8 MB from 700,000 on, so they go through the spool file as an import block does. */
function bulkRows(count: number, first: number): EncodedRows {
  let body = '';
  for (let n = 0; n < count; n++) body += `{"n":${n + first}}\n`;
  return new EncodedRows({ body, columns: ['n'] });
}

async function stored(): Promise<number> {
  const rs = await ch.client.query({ query: 'SELECT count() AS n FROM batch_rows_work', format: 'JSONEachRow' });
  return Number((await rs.json<{ n: string }>())[0]!.n);
}

describe('the embedded engine answers reads while rows are inserted', () => {
  it('a bound read asked during a live batch insert is answered before the insert ends', async () => {
    // Unbound, through chdb's raw insert, as a live batch's rows go.
    const rows = Array.from({ length: 100_000 }, (_, n) => ({ n }));
    expect(await readAnsweredDuringInsert(rows, rows.length)).toBe(true);
  });

  it('a bound read asked during a bulk insert (an import block, through the spool file) is answered before it ends', async () => {
    const count = 700_000;
    const rows = bulkRows(count, 1_000_000);
    // At least 8 MB, so the body goes through the spool file as an import block does.
    expect(rows.bytes().byteLength).toBeGreaterThan(8 << 20);
    expect(await readAnsweredDuringInsert(rows, count)).toBe(true);
  });

  it('a bulk insert that yields to reads (an import block) runs at a lower priority than the reads asked meanwhile', async () => {
    const count = 700_000;
    type Listed = { kind: string; priority: string };
    // The engine lists each running statement with the settings it changed: the insert's and this read's own priority.
    const listed = async () => {
      const rs = await ch.client.query({
        query: "SELECT query_kind AS kind, Settings['priority'] AS priority FROM system.processes WHERE query_kind IN ('Insert', 'Select') ORDER BY kind",
        format: 'JSONEachRow',
      });
      return rs.json<Listed>();
    };
    const priorities = async (insertRunning: () => boolean) => {
      // The insert reaches the engine after its connection's session settings, which take longer
      // than 50 ms on a loaded host: ask again until the engine lists it (while it still runs).
      let seen = await listed();
      while (!seen.some((s) => s.kind === 'Insert') && insertRunning()) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen = await listed();
      }
      expect(seen).toEqual([
        { kind: 'Insert', priority: '2' },
        { kind: 'Select', priority: '1' },
      ]);
    };
    await askedDuringInsert(bulkRows(count, 2_000_000), count, priorities, { token: `yield-${process.pid}-${Date.now()}`, bulk: true });
  });
});
