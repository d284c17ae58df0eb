import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';

const dataDir = join(tmpdir(), `sightline-reads-beside-writes-${process.pid}`);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the embedded engine answers reads while a batch is inserted', () => {
  it('a bound read asked during a live batch insert is answered before the insert ends', async () => {
    const ch = await connectNodeClickHouse({ dataDir });
    try {
      await ch.client.command({ query: 'CREATE TABLE batch_rows (n UInt64) ENGINE = MergeTree ORDER BY n' });
      // A view with real work per row, so the insert lasts long enough to ask a read inside it.
      await ch.client.command({
        query: `CREATE MATERIALIZED VIEW batch_rows_work ENGINE = MergeTree ORDER BY n
                AS SELECT n, arraySum(arrayMap(x -> cityHash64(x, n), range(200))) AS h FROM batch_rows`,
      });
      const rows = Array.from({ length: 100_000 }, (_, n) => ({ n }));
      let insertEnded = false;
      // Unbound, through chdb's raw insert, as a live batch's rows go.
      const insert = ch.rowStore.insert('batch_rows', rows).then(() => (insertEnded = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(insertEnded).toBe(false);
      const rs = await ch.client.query({ query: 'SELECT count() AS n FROM system.one WHERE dummy < {limit:UInt8}', query_params: { limit: 1 }, format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([{ n: '1' }]);
      const answeredDuringInsert = !insertEnded;
      await insert;
      expect(answeredDuringInsert).toBe(true);
      const count = await ch.client.query({ query: 'SELECT count() AS n FROM batch_rows_work', format: 'JSONEachRow' });
      expect(await count.json()).toEqual([{ n: '100000' }]);
    } finally {
      await ch.close();
    }
  });
});
