import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { migrate } from '../../src/adapters/migrate.js';
import { ANALYTICS_TABLES } from '../../src/analytics-tables.js';

const dataDir = join(tmpdir(), `sightline-retention-${process.pid}`);
const { client: ch } = await connectNodeClickHouse({ dataDir });
afterAll(async () => {
  await ch.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ttls = async () =>
  Object.fromEntries(
    (
      await (
        await ch.query({
          query: "SELECT name, extract(create_table_query, 'toIntervalDay\\\\((\\\\d+)\\\\)') AS days FROM system.tables WHERE database = currentDatabase()",
          format: 'JSONEachRow',
        })
      ).json<{ name: string; days: string }>()
    ).map((r) => [r.name, r.days]),
  );

describe('retention', () => {
  it('sets RETENTION_DAYS as the TTL of every analytics table, and follows a change', async () => {
    await migrate(ch, { retentionDays: 30 });
    const first = await ttls();
    // A table with keepDays keeps its rows no longer than that, whatever the retention.
    const kept = (days: number) => (t: (typeof ANALYTICS_TABLES)[number]) => String('keepDays' in t ? Math.min(days, t.keepDays) : days);
    for (const t of ANALYTICS_TABLES) expect([t.name, first[t.name]]).toEqual([t.name, kept(30)(t)]);
    await migrate(ch, { retentionDays: 30 });
    await migrate(ch, { retentionDays: 400 });
    const second = await ttls();
    for (const t of ANALYTICS_TABLES) expect([t.name, second[t.name]]).toEqual([t.name, kept(400)(t)]);
    expect(second.visit_parts).toBe('2');
    expect(second.events).toBe('400');
  });
});
