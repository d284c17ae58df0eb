import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxiedClickHouse, type FaultProxy } from '../helpers/fault-proxy.js';
import { parseConfig } from '../../src/config.js';
import { buildNodeRuntime } from '../../src/entry/node-deps.js';
import { directSink } from '../../src/ingest/direct-sink.js';
import { closeHarness, countEvents, createHarness, TEST_REDIS_URL, type Harness } from '../helpers/harness.js';
import { freePort } from '../helpers/node-server.js';

// The Node server (src/entry/node.ts, as `npm start` runs it) against a ClickHouse HTTP endpoint
// (the bridge over this process's embedded engine) behind a proxy that the test makes hang or
// refuse. SIGTERM must end the process within 10 s; what it could not send stays in its journal
// and the next start on the same DATA_DIR inserts it, exactly once.

let h: Harness;
let proxy: FaultProxy;
let closeProxied: () => Promise<void>;
let dataDir: string;

beforeAll(async () => {
  h = await createHarness();
  ({ proxy, close: closeProxied } = await startProxiedClickHouse(h.deps.clickhouse));
  dataDir = mkdtempSync(join(tmpdir(), 'sightline-sigterm-'));
});
afterAll(async () => {
  await closeProxied();
  await closeHarness();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('SIGTERM while ClickHouse hangs or refuses', () => {
  it('ends the process within 10 s, and the next start inserts the journaled events exactly once', async () => {
    const port = await freePort();
    // Events wait in the buffer until shutdown: the flush interval is longer than the test.
    const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, REDIS_URL: TEST_REDIS_URL, CLICKHOUSE_URL: proxy.url, TRUST_PROXY: '1', INGEST_IP_PER_MIN: '100000', INGEST_FLUSH_MS: '600000' };
    let output = '';
    const start = async (): Promise<ChildProcess> => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/node.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', () => (output += out));
      for (let i = 0; i < 300 && !out.includes('listening on'); i++) await new Promise((r) => setTimeout(r, 100));
      if (!out.includes('listening on')) throw new Error(`server did not start: ${out}`);
      return child;
    };
    const owner = await h.user('sigterm');
    const domain = h.domain('sigterm');
    const site = (await (await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'S', domain } })).json()).id;
    let sent = 0;
    const send = async (count: number) => {
      for (let i = 0; i < count; i++, sent++) {
        const res = await fetch(`http://127.0.0.1:${port}/api/event`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0', 'X-Forwarded-For': `10.7.${sent >> 8}.${sent & 255}` },
          body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/s${sent % 4}` }),
        });
        expect(res.status).toBe(202);
      }
    };
    const stored = () => countEvents(h, site);
    const journalFiles = () => readdirSync(join(dataDir, 'ingest-journal')).filter((n) => n.startsWith('events.'));
    const terminate = async (child: ChildProcess) => {
      const started = Date.now();
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      return { ms: Date.now() - started, code };
    };

    for (const fault of ['hang', 'refuse'] as const) {
      const server = await start();
      await send(60);
      // What an earlier run left is inserted at start (before this round's fault).
      await expect.poll(stored, { timeout: 10_000, interval: 100 }).toBe(sent - 60);
      // …and the server has heard ClickHouse take it (no sealed batch left in the journal): rows are visible
      // before the insert's answer reaches the server, and a fault set in between would cut that answer off.
      await expect.poll(() => journalFiles().length, { timeout: 10_000, interval: 100 }).toBe(0);
      await proxy.mode(fault);
      const { ms, code } = await terminate(server);
      expect({ fault, exitedWithinMs: ms < 10_000, code }).toEqual({ fault, exitedWithinMs: true, code: 0 });
      expect(output).toMatch(/stopped waiting for ClickHouse after 6000 ms; 60 rows stay in the journal/);
      await proxy.mode('up');
      expect(await stored()).toBe(sent - 60);
    }
    expect(journalFiles()).toHaveLength(1);

    // A working ClickHouse again: the next start inserts the journaled batch, once.
    const server = await start();
    try {
      await expect.poll(stored, { timeout: 20_000, interval: 250 }).toBe(120);
      await new Promise((r) => setTimeout(r, 500));
      expect(await stored()).toBe(120);
    } finally {
      await terminate(server);
    }
    expect(journalFiles()).toEqual([]);
    // Each later start found the one batch the round before it left.
    expect(output.match(/earlier process left in the journal are being inserted \(1 batch\)/g)).toHaveLength(2);
  }, 120_000);
});

// Background work (a part of closed hours or days stored after an answer) only keeps caches: closing
// the runtime (what SIGTERM does, src/entry/node.ts) must not wait for a task stuck on a hung ClickHouse.
describe('closing the runtime while ClickHouse hangs', () => {
  it('leaves a background task behind after a moment instead of waiting for it', async () => {
    const config = parseConfig({ DATA_DIR: join(dataDir, 'close'), REDIS_URL: TEST_REDIS_URL, CLICKHOUSE_URL: proxy.url });
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
