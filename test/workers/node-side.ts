/**
 * The Node half of the workerd tests, run by global-setup.ts as its own process (tsx), outside
 * Vite and its Worker build settings: the embedded ClickHouse (migrated) behind the HTTP bridge,
 * the real Redis (db 9) behind the Upstash bridge, and the Node app over the same two stores for
 * the parity table. Prints one JSON line with the URLs; SIGTERM closes everything.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  /** A stand-in of the JSON email API (Resend's shape): POST /emails records, GET /emails lists what it got. */
  emailApiUrl: string;
}

/** The email API as the Worker sees it: the HTTP boundary, mocked. Keeps every request with its bearer token. */
function startEmailApi(): Promise<{ url: string; close(): Promise<void> }> {
  const received: { authorization: string | undefined; body: unknown }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(received));
      received.push({ authorization: req.headers.authorization, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ id: `email-${received.length}` }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/emails`, close: () => new Promise<void>((r) => server.close(() => r())) }),
    ),
  );
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

const emailApi = await startEmailApi();

const ready: NodeSide = { upstashUrl: upstash.url, upstashToken: token, clickhouseUrl: chBridge.url, nodeAppUrl: node.url, emailApiUrl: emailApi.url };
process.stdout.write(`${JSON.stringify(ready)}\n`);

process.once('SIGTERM', async () => {
  await node.close();
  await emailApi.close();
  await upstash.close();
  await chBridge.close();
  await resp.close();
  await clickhouse.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
});
