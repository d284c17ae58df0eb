import { randomUUID } from 'node:crypto';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowStore } from '../../src/adapters/row-store.js';
import { BufferFullError, createBatcher } from '../../src/ingest/batcher.js';
import { RowBuffer } from '../../src/ingest/insert.js';
import { fileJournal, type BatchJournal } from '../../src/ingest/journal.js';
import { closeHarness, countEvents, createHarness, listenAsNode, unique, type Harness } from '../helpers/harness.js';
import { tempDirs } from '../helpers/temp-dirs.js';

/**
 * The Node ingest buffer is bounded in bytes as well as rows (503 past it, nothing lost), and a
 * journal backlog far larger than that bound is replayed batch by batch: never held at once,
 * every row stored exactly once.
 */

let h: Harness;
const dirs = tempDirs();
const tempDir = dirs.make;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await closeHarness();
  dirs.removeAll();
});

const count = (projectId: string) => countEvents(h, projectId);
const row = (projectId: string, i: number) => ({
  project_id: projectId,
  ts: '2025-04-01 10:00:00.000',
  kind: 'pageview',
  visitor_id: String(i + 1),
  session_id: '1',
  hostname: 'bounds.example',
  path: `/p${i % 7}`,
});
/** Bytes the first `n` rows take in the buffer (a JSON line each). */
const bytesOfRows = (projectId: string, n: number) => Array.from({ length: n }, (_, i) => JSON.stringify(row(projectId, i)).length + 1).reduce((a, b) => a + b, 0);

/** The real store, whose inserts fail while `down` is set, and which can watch each insert. */
function switchable(real: RowStore, onInsert: () => void = () => {}) {
  const state = { down: false };
  const store: RowStore = {
    ...real,
    async insert(table, rows, opts) {
      onInsert();
      if (state.down) throw new Error('connect ECONNREFUSED 127.0.0.1:8123 (test double)');
      return real.insert(table, rows, opts);
    },
  };
  return { store, state };
}

describe('the ingest buffer is bounded in bytes', () => {
  it('refuses rows past maxBufferedBytes while ClickHouse is down, keeps what it took, and stores it once back up', async () => {
    const projectId = unique('prj_bytes');
    const ch = switchable(h.deps.rowStore);
    ch.state.down = true;
    const lines: string[] = [];
    // Room for exactly 20 rows (the 21st is a few bytes short of fitting).
    const bound = bytesOfRows(projectId, 21) - 10;
    const batcher = createBatcher(ch.store, { maxBufferedBytes: bound, maxBufferedRows: 1_000_000, flushIntervalMs: 20, retryDelayMs: 10, maxRetryDelayMs: 20, log: (l) => lines.push(l) });
    let accepted = 0;
    let refused: unknown = null;
    for (let i = 0; i < 100 && !refused; i++) {
      try {
        await batcher.write('events', [row(projectId, i)]);
        accepted++;
      } catch (err) {
        refused = err;
      }
    }
    // The row bound is far away: the byte bound refused the 21st row.
    expect(refused).toBeInstanceOf(BufferFullError);
    expect(accepted).toBe(20);
    expect(batcher.buffered()).toBe(20);
    expect(batcher.bufferedBytes()).toBeLessThanOrEqual(bound);
    // A batch of several rows that does not fit is refused whole, leaving the buffer as it was.
    await expect(batcher.write('events', [row(projectId, 200), row(projectId, 201)])).rejects.toBeInstanceOf(BufferFullError);
    expect(batcher.buffered()).toBe(20);
    expect(lines.some((l) => /buffer full \(20 rows, \d+ bytes/.test(l))).toBe(true);
    ch.state.down = false;
    await batcher.close();
    expect(await count(projectId)).toBe(20);
    expect(batcher.bufferedBytes()).toBe(0);
  });

  it('gives back the bytes of rows the journal refused, so refusals never fill the buffer', async () => {
    const dir = tempDir('refused-bytes');
    const projectId = unique('prj_refused_bytes');
    const inner = fileJournal(dir);
    let refuse = false;
    const journal: BatchJournal = {
      ...inner,
      append: (table, bytes) => {
        if (refuse) throw new Error('ENOSPC: no space left on device, write');
        inner.append(table, bytes);
      },
    };
    const bound = bytesOfRows(projectId, 6);
    const batcher = createBatcher(h.deps.rowStore, { journal, maxBufferedBytes: bound, flushIntervalMs: 3_600_000 });
    const writeRows = (from: number, to: number) => Promise.allSettled(Array.from({ length: to - from }, (_, i) => batcher.write('events', [row(projectId, from + i)])));
    expect((await writeRows(0, 3)).every((r) => r.status === 'fulfilled')).toBe(true);
    const kept = batcher.bufferedBytes();
    refuse = true;
    // Ten rounds of refused rows, each round as large as what is left of the bound.
    for (let round = 0; round < 10; round++) expect((await writeRows(3, 6)).every((r) => r.status === 'rejected')).toBe(true);
    expect(batcher.bufferedBytes()).toBe(kept);
    refuse = false;
    expect((await writeRows(3, 6)).every((r) => r.status === 'fulfilled')).toBe(true);
    await batcher.close();
    expect(await count(projectId)).toBe(6);
  });

  it('POST /api/event answers 503 past the byte bound, on the Node fast path and the Hono route', async () => {
    const ch = switchable(h.deps.rowStore);
    ch.state.down = true;
    let batcher!: ReturnType<typeof createBatcher>;
    // Room for a few events (an event row is a few hundred bytes).
    const small = await createHarness({
      sink: () => (batcher = createBatcher(ch.store, { maxBufferedBytes: 3000, flushIntervalMs: 20, retryDelayMs: 10, maxRetryDelayMs: 20, log: () => {} })),
    });
    const owner = await small.user('bytes');
    const domain = small.domain('bytes');
    const site = (await (await small.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Bytes', domain } })).json()).id as string;
    const server = await listenAsNode(small);
    try {
      const send = (base: string, i: number) =>
        fetch(`${base}/api/event`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0' },
          body: JSON.stringify({ site, kind: 'custom', name: `e${i}`, url: `https://${domain}/page-${i}`, props: { pad: 'x'.repeat(300) } }),
        });
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        statuses.push((await send(server.url, i)).status);
      }
      const accepted = statuses.filter((s) => s === 202).length;
      expect(accepted).toBeGreaterThan(0);
      expect(statuses.slice(accepted)).toEqual(Array(30 - accepted).fill(503));
      expect(batcher.bufferedBytes()).toBeLessThanOrEqual(3000);
      const refused = await send(server.url, 99);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toEqual({ error: 'Service temporarily unavailable' });
      const viaHono = await small.app.request('/api/event', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0' },
        body: JSON.stringify({ site, kind: 'custom', name: 'hono', url: `https://${domain}/hono`, props: { pad: 'x'.repeat(300) } }),
      });
      expect(viaHono.status).toBe(503);
      // Back up: what was acknowledged is stored, exactly.
      ch.state.down = false;
      await batcher.flush();
      expect(await count(site)).toBe(accepted);
    } finally {
      ch.state.down = false;
      await server.close();
      await batcher.close();
    }
  });
});

describe('the journal is replayed batch by batch', () => {
  it('a backlog many times the byte bound is inserted exactly once, with at most a few batches in memory', async () => {
    const dir = tempDir('backlog');
    const projectId = unique('prj_backlog');
    const FILES = 24;
    const ROWS = 250;
    let next = 0;
    const batchOf = (rows: number) => {
      const buffer = new RowBuffer();
      for (let i = 0; i < rows; i++) buffer.append(row(projectId, next++));
      return buffer.bytes();
    };
    for (let f = 0; f < FILES; f++) writeFileSync(join(dir, `events.${randomUUID()}.jsonl`), batchOf(ROWS));
    // The file that was still open at the crash, ending in a partial line.
    const open = batchOf(100);
    writeFileSync(join(dir, 'open-events.jsonl'), Buffer.concat([open, Buffer.from('{"project_id":"cut off')]));
    const fileBytes = open.byteLength * (ROWS / 100);
    const backlogBytes = FILES * fileBytes + open.byteLength;
    // The bound holds about three files; the backlog is eight times that.
    const bound = 3 * fileBytes;
    expect(backlogBytes).toBeGreaterThan(8 * bound);

    const inner = fileJournal(dir);
    let held = 0;
    let peakHeld = 0;
    const journal: BatchJournal = {
      ...inner,
      recover: () =>
        inner.recover().map((b) => ({
          ...b,
          load: () => {
            const loaded = b.load();
            if (loaded) peakHeld = Math.max(peakHeld, ++held);
            return loaded;
          },
        })),
      done: (table, token) => {
        held--;
        inner.done(table, token);
      },
    };
    let batcher: ReturnType<typeof createBatcher> | undefined;
    let peakBytes = 0;
    // Watches what the batcher holds at every insert (the first starts before createBatcher returns).
    const ch = switchable(h.deps.rowStore, () => (peakBytes = Math.max(peakBytes, batcher?.bufferedBytes() ?? 0)));
    const logs: string[] = [];
    batcher = createBatcher(ch.store, { journal, maxBufferedBytes: bound, flushIntervalMs: 3_600_000, log: (l) => logs.push(l) });
    expect(logs.some((l) => /earlier process left in the journal .*\(25 batches\)/.test(l))).toBe(true);
    // Live traffic goes on while the backlog drains.
    await batcher.write('events', [row(projectId, next++)]);
    await batcher.flush();
    expect(await count(projectId)).toBe(FILES * ROWS + 100 + 1);
    expect(peakHeld).toBeGreaterThan(0);
    expect(peakHeld).toBeLessThanOrEqual(2);
    expect(peakBytes).toBeLessThanOrEqual(bound);
    expect(readdirSync(dir).filter((n) => !n.startsWith('open-'))).toEqual([]);
    await batcher.close();
    // A second start finds nothing left.
    const again = createBatcher(h.deps.rowStore, { journal: fileJournal(dir) });
    await again.close();
    expect(await count(projectId)).toBe(FILES * ROWS + 100 + 1);
  }, 60_000);
});
