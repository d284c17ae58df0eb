import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createBatcher } from '../../src/ingest/batcher.js';
import { insertLines, RowBuffer } from '../../src/ingest/insert.js';
import { fileJournal, type BatchJournal } from '../../src/ingest/journal.js';
import { closeHarness, countEvents, createHarness, TEST_REDIS_URL, unique, type Harness } from '../helpers/harness.js';
import { freePort, startNodeServer } from '../helpers/node-server.js';
import { tempDirs } from '../helpers/temp-dirs.js';

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
const row = (projectId: string, i: number) => ({ project_id: projectId, ts: '2025-04-01 10:00:00.000', kind: 'pageview', visitor_id: String(i + 1), session_id: '1', hostname: 'j.example', path: `/p${i % 7}` });

/** Rows of `table` a journal directory holds, open and sealed batches together. */
const journaledRows = (dir: string, table: string) =>
  readdirSync(dir)
    .filter((name) => name === `open-${table}.jsonl` || name.startsWith(`${table}.`))
    .reduce((rows, name) => rows + readFileSync(join(dir, name), 'utf8').split('\n').filter((line) => line !== '').length, 0);

describe('the ingest journal', () => {
  it('a new batcher inserts what an abandoned one acknowledged, open and sealed, exactly once', async () => {
    const dir = tempDir('journal');
    const projectId = unique('prj_journal');
    // "Crashes" without a flush: the timer never fires and close is never called.
    const crashed = createBatcher(h.deps.rowStore, { journal: fileJournal(dir), maxBatchRows: 300, flushIntervalMs: 3_600_000 });
    // 300 rows seal a batch at once (its insert starts), the next 150 stay open.
    for (let i = 0; i < 450; i++) await crashed.write('events', [row(projectId, i)]);
    // A sealed batch whose insert landed but whose "done" never came: retried, it must not count twice.
    const buffer = new RowBuffer();
    for (let i = 450; i < 500; i++) buffer.append(row(projectId, i));
    const token = randomUUID();
    // As the batcher leaves it: sealed under its token in the journal, then inserted.
    writeFileSync(join(dir, `events.${token}.jsonl`), buffer.bytes());
    await insertLines(h.deps.rowStore, 'events', buffer.bytes(), { token });
    // The first 300 rows' insert, started when they sealed the batch, lands beside them.
    await vi.waitFor(async () => expect(await count(projectId)).toBe(350), { timeout: 10_000, interval: 50 });

    const logs: string[] = [];
    const restarted = createBatcher(h.deps.rowStore, { journal: fileJournal(dir), log: (l) => logs.push(l) });
    await restarted.flush();
    expect(await count(projectId)).toBe(500);
    expect(logs.some((l) => /rows an earlier process left/.test(l))).toBe(true);
    // Everything inserted is gone from the journal.
    expect(readdirSync(dir).filter((n) => n.endsWith('.jsonl') && !n.startsWith('open-'))).toEqual([]);
    await restarted.close();
  });

  it('journals the writes of one event-loop turn in one append, before any of them resolves', async () => {
    const dir = tempDir('group');
    const projectId = unique('prj_group');
    const inner = fileJournal(dir);
    const appends: number[] = [];
    const journal: BatchJournal = { ...inner, append: (table, bytes) => (appends.push(bytes.byteLength), inner.append(table, bytes)) };
    const batcher = createBatcher(h.deps.rowStore, { journal, flushIntervalMs: 3_600_000 });
    const resolvedBeforeAppend: number[] = [];
    const writes = Array.from({ length: 20 }, (_, i) => batcher.write('events', [row(projectId, i)]).then(() => appends.length === 0 && resolvedBeforeAppend.push(i)));
    await Promise.all(writes);
    expect(appends.length).toBe(1);
    expect(resolvedBeforeAppend).toEqual([]);
    // A later turn appends only its own rows.
    await batcher.write('events', [row(projectId, 20)]);
    expect(appends.length).toBe(2);
    // What a crash now would leave: all 21 rows, each once.
    const left = fileJournal(dir).recover();
    expect(left.map((b) => b.load()?.rows)).toEqual([21]);
    const restarted = createBatcher(h.deps.rowStore, { journal: fileJournal(dir) });
    await restarted.close();
    expect(await count(projectId)).toBe(21);
    await batcher.close().catch(() => {});
  });

  it('fails the writes whose rows the journal refused, and never stores those rows', async () => {
    const dir = tempDir('refused');
    const projectId = unique('prj_refused');
    const inner = fileJournal(dir);
    let refuse = false;
    const journal: BatchJournal = {
      ...inner,
      append: (table, bytes) => {
        if (refuse) throw new Error('ENOSPC: no space left on device, write');
        inner.append(table, bytes);
      },
    };
    // A batch is sealed at 12 rows: the refusal also hits the commit a seal makes first.
    const batcher = createBatcher(h.deps.rowStore, { journal, maxBatchRows: 12, flushIntervalMs: 3_600_000 });
    const writeRows = (from: number, to: number) => Promise.allSettled(Array.from({ length: to - from }, (_, i) => batcher.write('events', [row(projectId, from + i)])));
    expect((await writeRows(0, 5)).every((r) => r.status === 'fulfilled')).toBe(true);
    refuse = true;
    // Rows 5-11: the 12th seals the batch, whose journal commit is refused.
    const refused = await writeRows(5, 12);
    expect(refused.map((r) => r.status)).toEqual(Array(7).fill('rejected'));
    expect(String((refused[0] as PromiseRejectedResult).reason)).toMatch(/ENOSPC/);
    refuse = false;
    expect((await writeRows(12, 17)).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(batcher.buffered()).toBe(10);
    await batcher.close();
    const rs = await h.deps.clickhouse.query({ query: 'SELECT visitor_id FROM events WHERE project_id = {id:String} ORDER BY toUInt64(visitor_id)', query_params: { id: projectId }, format: 'JSONEachRow' });
    const stored = (await rs.json<{ visitor_id: string }>()).map((r) => Number(r.visitor_id) - 1);
    expect(stored).toEqual([0, 1, 2, 3, 4, 12, 13, 14, 15, 16]);
  });

  it('drops a partial last line left by a crash in the middle of a write', async () => {
    const dir = tempDir('partial');
    const projectId = unique('prj_partial');
    const journal = fileJournal(dir);
    const buffer = new RowBuffer();
    for (let i = 0; i < 3; i++) buffer.append(row(projectId, i));
    journal.append('events', buffer.bytes());
    journal.append('events', new TextEncoder().encode('{"project_id":"cut off mid-wr'));
    const restarted = createBatcher(h.deps.rowStore, { journal: fileJournal(dir) });
    await restarted.flush();
    expect(await count(projectId)).toBe(3);
    await restarted.close();
  });
});

describe('kill -9 of the Node server', () => {
  it('loses no acknowledged event: the restarted server inserts what the killed one held', async () => {
    const dataDir = tempDir('kill9');
    const port = await freePort();
    // No timed flush before the kill, however slow the host: every event is still in the buffer.
    const env = { PORT: String(port), DATA_DIR: dataDir, REDIS_URL: TEST_REDIS_URL, TRUST_PROXY: '1', INGEST_IP_PER_MIN: '100000', INGEST_FLUSH_MS: '600000' };
    const owner = await h.user('kill9');
    const domain = h.domain('kill9');
    const site = (await (await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'K', domain } })).json()).id;

    let server = await startNodeServer(env);
    const total = 400;
    for (let i = 0; i < total; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/event`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0', 'X-Forwarded-For': `10.9.${i >> 8}.${i & 255}` },
        body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/k${i % 5}` }),
      });
      expect(res.status).toBe(202);
      expect(res.headers.get('x-sightline-dropped')).toBeNull();
    }
    // No flush: the process is killed with the last second of events in its buffer.
    await server.stop('SIGKILL');
    // What the restart has to replay: every acknowledged event, journaled and never inserted.
    expect(journaledRows(join(dataDir, 'ingest-journal'), 'events')).toBe(total);

    server = await startNodeServer(env);
    try {
      await expect
        .poll(
          async () => {
            const res = await fetch(`http://127.0.0.1:${port}/api/v1/projects/${domain}/stats?period=today`, { headers: { Authorization: `Bearer ${owner.readKey}` } });
            return (await res.json()).pageviews;
          },
          { timeout: 20_000, interval: 250 },
        )
        .toBe(total);
    } finally {
      await server.stop();
    }
  }, 90_000);
});
