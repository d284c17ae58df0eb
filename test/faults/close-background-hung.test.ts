import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { buildNodeRuntime } from '../../src/entry/node-deps.js';
import { directSink } from '../../src/ingest/direct-sink.js';
import { startProxiedClickHouse, type FaultProxy } from '../helpers/fault-proxy.js';
import { closeHarness, createHarness, TEST_REDIS_URL, type Harness } from '../helpers/harness.js';

// Background work (a part of closed hours or days stored after an answer) only keeps caches: on a
// ClickHouse that stops answering, closing the runtime (SIGTERM, src/entry/node.ts) must not wait
// for it, or the process outlives its shutdown budget.

let h: Harness;
let proxy: FaultProxy;
let closeProxied: () => Promise<void>;
let dataDir: string;

beforeAll(async () => {
  h = await createHarness();
  ({ proxy, close: closeProxied } = await startProxiedClickHouse(h.deps.clickhouse));
  dataDir = mkdtempSync(join(tmpdir(), 'sightline-close-'));
});
afterAll(async () => {
  await closeProxied();
  await closeHarness();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('closing the runtime while ClickHouse hangs', () => {
  it('leaves a background task behind after a moment instead of waiting for it', async () => {
    const config = parseConfig({ DATA_DIR: dataDir, REDIS_URL: TEST_REDIS_URL, CLICKHOUSE_URL: proxy.url });
    const runtime = await buildNodeRuntime(config, { makeSink: (d) => directSink(d.rowStore), dataVersionKey: `dataversion:close-test:${process.pid}` });
    await proxy.mode('hang');
    let taskEnded = false;
    runtime.deps.background!.run('a store on a hung engine', async () => {
      await runtime.deps.clickhouse.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' });
      taskEnded = true;
    });
    const started = Date.now();
    const closed = await Promise.race([runtime.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('still waiting'), 8000))]);
    expect({ closed, withinMs: Date.now() - started < 5000 }).toEqual({ closed: 'closed', withinMs: true });
    expect(taskEnded).toBe(false);
    await proxy.mode('up');
  });
});
