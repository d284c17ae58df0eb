/**
 * The Node half of the workerd tests, run by global-setup.ts as its own process (tsx), outside
 * Vite and its Worker build settings: the embedded ClickHouse (migrated) behind the HTTP bridge,
 * the real Redis (db 9) behind the Upstash bridge, and the Node app over the same two stores for
 * the parity table. Prints one JSON line with the URLs; SIGTERM closes everything.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClickHouseBridge } from '../../scripts/bridges/clickhouse-http.js';
import { startUpstashBridge } from '../../scripts/bridges/upstash-rest.js';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { systemClock } from '../../src/adapters/clock.js';
import { migrate } from '../../src/adapters/migrate.js';
import { connectRespRedis } from '../../src/adapters/redis-resp.js';
import { createApp } from '../../src/app.js';
import { parseConfig } from '../../src/config.js';
import { directSink } from '../../src/ingest/direct-sink.js';
import { nodeExportStore } from '../../src/jobs/node-export-store.js';
import { listen } from '../helpers/harness.js';

export interface NodeSide {
  upstashUrl: string;
  upstashToken: string;
  clickhouseUrl: string;
  nodeAppUrl: string;
}

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/9';
const dataDir = mkdtempSync(join(tmpdir(), 'sightline-workers-'));
const { client: clickhouse, rowStore } = await connectNodeClickHouse({ dataDir });
await migrate(clickhouse, { retentionDays: 1095 });
const token = randomBytes(16).toString('hex');
const chBridge = await startClickHouseBridge({ clickhouse });
const upstash = await startUpstashBridge({ redisUrl, token });
const config = parseConfig({ DATA_DIR: dataDir, REDIS_URL: redisUrl, RATE_LIMIT_EXPORT_PER_MIN: '1000' });
const resp = await connectRespRedis({ url: redisUrl });
const node = await listen(
  createApp({ config, redis: resp.redis, clickhouse, rowStore, clock: systemClock, sink: directSink(rowStore), exportStore: nodeExportStore(join(dataDir, 'exports')) }),
);

const ready: NodeSide = { upstashUrl: upstash.url, upstashToken: token, clickhouseUrl: chBridge.url, nodeAppUrl: node.url };
process.stdout.write(`${JSON.stringify(ready)}\n`);

process.once('SIGTERM', async () => {
  await node.close();
  await upstash.close();
  await chBridge.close();
  await resp.close();
  await clickhouse.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
});
