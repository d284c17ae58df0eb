import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';

const dataDir = join(tmpdir(), `sightline-embedded-close-${process.pid}`);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('closing the embedded engine', () => {
  it('resolves only once an insert its caller stopped waiting for has finished inside the engine', async () => {
    const ch = await connectNodeClickHouse({ dataDir });
    await ch.client.command({ query: 'CREATE TABLE long_insert (n UInt64, s String) ENGINE = MergeTree ORDER BY n' });
    // The batcher gives up on an insert at its close deadline, but the engine goes on with it: a
    // process exiting under it crashes (SIGSEGV) instead of exiting with its code.
    const insert = ch.client.command({ query: 'INSERT INTO long_insert SELECT number, toString(number) FROM numbers(20000000)' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await ch.close();
    // Right after close the engine is free and holds the whole insert.
    const again = await connectNodeClickHouse({ dataDir });
    try {
      const rs = await again.client.query({ query: 'SELECT count() AS n FROM long_insert', format: 'JSONEachRow' });
      expect(await rs.json()).toEqual([{ n: '20000000' }]);
    } finally {
      await again.close();
    }
    await insert;
  });
});
