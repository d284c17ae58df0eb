import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectNodeClickHouse, type NodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import type { RowStore } from '../../src/adapters/row-store.js';
import { createBatcher } from '../../src/ingest/batcher.js';
import { fileQuarantine } from '../../src/ingest/file-quarantine.js';
import { fileJournal } from '../../src/ingest/journal.js';
import { startClickHouseBridge } from '../../scripts/bridges/clickhouse-http.js';
import type { RunningBridge } from '../../scripts/bridges/listen.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';
import { tempDirs } from '../helpers/temp-dirs.js';

// ClickHouse refusing inserts, for real: rows the embedded engine refuses (a lone surrogate, a
// timestamp that is none, an unknown enum value), and a ClickHouse HTTP endpoint that refuses
// connections or drops answers. Every count is exact.

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

const scalar = async (query: string, id: string) => {
  const rs = await h.deps.clickhouse.query({ query, query_params: { id }, format: 'JSONEachRow' });
  return Number((await rs.json<{ n: string }>())[0].n);
};
const events = (id: string) => scalar('SELECT count() AS n FROM events WHERE project_id = {id:String}', id);
const pageviews = (id: string) => scalar('SELECT sum(pageviews) AS n FROM stats_15m WHERE project_id = {id:String}', id);
const botHits = (id: string) => scalar('SELECT count() AS n FROM bot_hits WHERE project_id = {id:String}', id);

const row = (projectId: string, i: number) => ({ project_id: projectId, ts: '2025-06-01 10:00:00.000', kind: 'pageview', visitor_id: String(i + 1), session_id: String(i + 1), hostname: 'poison.example', path: `/p${i % 9}` });
const hit = (projectId: string, i: number) => ({ project_id: projectId, ts: '2025-06-01 10:00:00.000', bot_slug: 'googlebot', bot_name: 'Googlebot', category: 'indexing', verified: 1, path: `/b${i}`, status: 200, user_agent: 'Googlebot' });
/** Rows the engine refuses, by position in the batch: each with the error it refuses them with. */
const poisoned: Record<number, [(r: ReturnType<typeof row>) => Record<string, unknown>, RegExp]> = {
  17: [(r) => ({ ...r, path: 'x\ud800' }), /surrogate pair/],
  500: [(r) => ({ ...r, ts: 'not a date' }), /Cannot read DateTime/],
  998: [(r) => ({ ...r, kind: 'bogus' }), /Unknown element 'bogus' for enum/],
};
const batchRows = (projectId: string, total: number) => Array.from({ length: total }, (_, i) => (poisoned[i] ? poisoned[i][0](row(projectId, i)) : row(projectId, i)));

interface QuarantineLine {
  table: string;
  token: string;
  error: string;
  at: string;
  row: { visitor_id: string };
}
const quarantineLines = (dir: string) =>
  readdirSync(dir).flatMap((name) =>
    readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => ({ file: name, ...(JSON.parse(l) as QuarantineLine) })),
  );

/** The real store, except that inserts after the first `answered` land but never answer (a crash right after). */
function answersLostAfter(real: RowStore, answered: number): RowStore {
  let calls = 0;
  return {
    ...real,
    async insert(table, rows, opts) {
      const answers = calls++ < answered;
      await real.insert(table, rows, opts);
      return answers ? undefined : new Promise<never>(() => {});
    },
  };
}

describe('ClickHouse refusing rows (data errors)', () => {
  it('stores every good row once, quarantines the refused ones with their error, and holds nothing back', async () => {
    const projectId = unique('prj_poison');
    const journalDir = tempDir('poison-journal');
    const quarantineDir = tempDir('poison-quarantine');
    const logs: string[] = [];
    const batcher = createBatcher(h.deps.rowStore, { journal: fileJournal(journalDir), quarantine: fileQuarantine(quarantineDir), maxBatchRows: 1000, flushIntervalMs: 100, log: (l) => logs.push(l) });
    const started = Date.now();
    // One batch of 1000 rows with 3 the engine refuses; bot hits alongside; then 2 clean batches.
    await Promise.all([batcher.write('events', batchRows(projectId, 1000)), batcher.write('bot_hits', Array.from({ length: 40 }, (_, i) => hit(projectId, i)))]);
    await batcher.write('events', Array.from({ length: 2000 }, (_, i) => row(projectId, 1000 + i)));
    // Everything lands without a flush: the poisoned batch does not block its table.
    await expect.poll(() => events(projectId), { timeout: 20_000, interval: 100 }).toBe(2997);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(await botHits(projectId)).toBe(40);
    await batcher.close();
    expect(await events(projectId)).toBe(2997);
    expect(await pageviews(projectId)).toBe(2997);
    expect(batcher.quarantined()).toBe(3);
    expect(batcher.buffered()).toBe(0);

    const lines = quarantineLines(quarantineDir);
    expect(lines.map((l) => Number(l.row.visitor_id) - 1)).toEqual([17, 500, 998]);
    for (const l of lines) {
      expect(l.error).toMatch(poisoned[Number(l.row.visitor_id) - 1][1]);
      expect(l.table).toBe('events');
      expect(l.file).toBe(`events.${l.token}.ndjson`);
    }
    expect(new Set(lines.map((l) => l.file)).size).toBe(1);
    expect(logs.filter((l) => /quarantined 3 of 1000 rows of a batch into events/.test(l))).toHaveLength(1);
    expect(logs.some((l) => /splitting it to isolate/.test(l))).toBe(true);
    // Nothing is left in the journal.
    expect(readdirSync(journalDir).filter((n) => !n.startsWith('open-'))).toEqual([]);
  }, 60_000);

  it('a replay after a crash in the middle of isolating stores each row once (the parts keep their tokens)', async () => {
    const projectId = unique('prj_replay');
    const journalDir = tempDir('replay-journal');
    const quarantineDir = tempDir('replay-quarantine');
    // Isolating rows 17, 500 and 998 takes 7 inserts: the batch (refused at row 17), row 17 alone,
    // the batch without it (refused at row 500), row 500 alone, the batch without both (refused at
    // 998), row 998 alone, and the batch without the three, which stores 997 rows. That last one
    // lands but its answer never comes; the process gives up (its close deadline) before the
    // quarantine is written and the batch leaves the journal.
    const crashed = createBatcher(answersLostAfter(h.deps.rowStore, 6), { journal: fileJournal(journalDir), quarantine: fileQuarantine(quarantineDir), flushIntervalMs: 3_600_000, closeTimeoutMs: 3000, log: () => {} });
    await crashed.write('events', batchRows(projectId, 1000));
    await crashed.close();
    expect(await events(projectId)).toBe(997);
    expect(crashed.buffered()).toBe(1000);
    expect(quarantineLines(quarantineDir)).toEqual([]);

    const restarted = createBatcher(h.deps.rowStore, { journal: fileJournal(journalDir), quarantine: fileQuarantine(quarantineDir), log: () => {} });
    await restarted.close();
    expect(await events(projectId)).toBe(997);
    expect(await pageviews(projectId)).toBe(997);
    expect(restarted.quarantined()).toBe(3);
    expect(quarantineLines(quarantineDir).map((l) => Number(l.row.visitor_id) - 1)).toEqual([17, 500, 998]);
    expect(readdirSync(journalDir).filter((n) => !n.startsWith('open-'))).toEqual([]);
  }, 60_000);
});

describe('a batch with more refused rows than its time budget allows', () => {
  it('stops isolating when the budget is spent: the failing part goes to the quarantine whole, nothing is lost or doubled', async () => {
    const projectId = unique('prj_budget');
    const quarantineDir = tempDir('budget-quarantine');
    const batcher = createBatcher(h.deps.rowStore, { quarantine: fileQuarantine(quarantineDir), flushIntervalMs: 3_600_000, isolationBudgetMs: 400, log: () => {} });
    // Every 10th row of 2000 is refused: 200 of them, far more than 400 ms can isolate.
    const rows = Array.from({ length: 2000 }, (_, i) => (i % 10 === 5 ? { ...row(projectId, i), kind: 'bogus' } : row(projectId, i)));
    const started = Date.now();
    await batcher.write('events', rows);
    await batcher.close();
    expect(Date.now() - started).toBeLessThan(15_000);
    const lines = quarantineLines(quarantineDir);
    const quarantined = lines.map((l) => Number(l.row.visitor_id) - 1);
    const stored = await events(projectId);
    // Every row is in exactly one place, and every refused row is in the quarantine.
    expect(stored + quarantined.length).toBe(2000);
    expect(new Set(quarantined).size).toBe(quarantined.length);
    expect(quarantined.filter((i) => i % 10 === 5)).toHaveLength(200);
    expect(lines.some((l) => /not isolated in time, refused with its part: .*Unknown element 'bogus'/.test(l.error))).toBe(true);
    expect(batcher.quarantined()).toBe(quarantined.length);
  }, 60_000);
});

describe('ClickHouse refusing connections', () => {
  let bridge: RunningBridge;
  let proxy: FaultProxy;
  let client: NodeClickHouse;
  beforeAll(async () => {
    bridge = await startClickHouseBridge({ clickhouse: h.deps.clickhouse });
    const { port } = new URL(bridge.url);
    proxy = await startFaultProxy({ host: '127.0.0.1', port: Number(port) }, 'refuse');
    client = await connectNodeClickHouse({ url: proxy.url, dataDir: h.deps.config.DATA_DIR });
  });
  afterAll(async () => {
    await client.client.close();
    await proxy.close();
    await bridge.close();
  });

  it('an outage in the middle of isolating refused rows does not eat the isolation budget', async () => {
    await proxy.mode('up');
    const projectId = unique('prj_outage_mid');
    const quarantineDir = tempDir('outage-quarantine');
    // The connection drops for 3 s right after the first two inserts (the batch, refused at row
    // 17, and row 17 alone): longer than the whole isolation budget.
    let calls = 0;
    const flaky: RowStore = {
      ...client.rowStore,
      async insert(table, rows, opts) {
        if (++calls === 3) {
          await proxy.mode('refuse');
          setTimeout(() => void proxy.mode('up'), 3000);
        }
        return client.rowStore.insert(table, rows, opts);
      },
    };
    const batcher = createBatcher(flaky, { quarantine: fileQuarantine(quarantineDir), flushIntervalMs: 3_600_000, retryDelayMs: 50, maxRetryDelayMs: 200, isolationBudgetMs: 1500, log: () => {} });
    await batcher.write('events', batchRows(projectId, 1000));
    const started = Date.now();
    await batcher.close();
    expect(Date.now() - started).toBeGreaterThan(3000);
    expect(await events(projectId)).toBe(997);
    const lines = quarantineLines(quarantineDir);
    expect(lines.map((l) => Number(l.row.visitor_id) - 1)).toEqual([17, 500, 998]);
    expect(lines.filter((l) => /not isolated in time/.test(l.error))).toEqual([]);
  }, 60_000);

  it('retries through refused connections and lost answers, then stores every row exactly once', async () => {
    await proxy.mode('refuse');
    const projectId = unique('prj_conn');
    const logs: string[] = [];
    const batcher = createBatcher(client.rowStore, { journal: fileJournal(tempDir('conn-journal')), quarantine: fileQuarantine(tempDir('conn-quarantine')), maxBatchRows: 100, flushIntervalMs: 50, retryDelayMs: 50, maxRetryDelayMs: 300, log: (l) => logs.push(l) });
    for (let i = 0; i < 500; i += 50) await batcher.write('events', Array.from({ length: 50 }, (_, j) => row(projectId, i + j)));
    await expect.poll(() => logs.filter((l) => /insert into events failed.*transient.*ECONNREFUSED/.test(l)).length, { timeout: 10_000 }).toBeGreaterThan(1);
    expect(await events(projectId)).toBe(0);

    // The endpoint takes inserts again but every answer is lost: rows land, the batcher cannot know.
    await proxy.mode('cut');
    await expect.poll(() => events(projectId), { timeout: 10_000, interval: 100 }).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 500));
    // Stored, but still held: every answer was lost.
    expect(batcher.buffered()).toBe(500);

    await proxy.mode('up');
    await batcher.close();
    expect(batcher.buffered()).toBe(0);
    expect(batcher.quarantined()).toBe(0);
    expect(await events(projectId)).toBe(500);
    expect(await pageviews(projectId)).toBe(500);
    expect(logs.some((l) => /recovered/.test(l))).toBe(true);
  }, 60_000);
});

describe('ClickHouse failing with an error that is neither a data nor a connection error', () => {
  let bridge: RunningBridge;
  let front: Server;
  let client: NodeClickHouse;
  const state = { pingUp: true, refusals: 0 };
  beforeAll(async () => {
    bridge = await startClickHouseBridge({ clickhouse: h.deps.clickhouse });
    // A ClickHouse HTTP endpoint that fails any insert holding "/boom" with an exception the
    // classifier does not know (code 395, no row named), and answers /ping as told.
    front = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      if (req.url?.startsWith('/ping')) {
        res.writeHead(state.pingUp ? 200 : 503).end(state.pingUp ? 'Ok.\n' : 'Service Unavailable');
        return;
      }
      if (body.includes('/boom')) {
        state.refusals++;
        res.writeHead(500, { 'X-ClickHouse-Exception-Code': '395' }).end("Code: 395. DB::Exception: Value passed to 'throwIf' function is non-zero. (FUNCTION_THROW_IF_VALUE_IS_NON_ZERO) (version test)\n");
        return;
      }
      const upstream = await fetch(`${bridge.url}${req.url}`, { method: req.method, headers: { 'Content-Type': req.headers['content-type'] ?? 'text/plain' }, body: req.method === 'GET' ? undefined : body });
      const headers: Record<string, string> = {};
      upstream.headers.forEach((v, k) => k.startsWith('x-clickhouse') && (headers[k] = v));
      res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    client = await connectNodeClickHouse({ url: `http://127.0.0.1:${(front.address() as { port: number }).port}`, dataDir: h.deps.config.DATA_DIR });
  });
  afterAll(async () => {
    await client.client.close();
    await new Promise<void>((r) => front.close(() => r()));
    await bridge.close();
  });

  it('retries it for the grace period, holds on while ClickHouse does not answer a ping, then isolates the row', async () => {
    const projectId = unique('prj_unknown');
    const quarantineDir = tempDir('unknown-quarantine');
    const logs: string[] = [];
    state.pingUp = false;
    const batcher = createBatcher(client.rowStore, { quarantine: fileQuarantine(quarantineDir), flushIntervalMs: 50, retryDelayMs: 50, maxRetryDelayMs: 100, unknownErrorGraceMs: 500, log: (l) => logs.push(l) });
    const started = Date.now();
    await batcher.write('events', Array.from({ length: 20 }, (_, i) => (i === 13 ? { ...row(projectId, i), path: '/boom' } : row(projectId, i))));
    // Past the grace, but ClickHouse does not answer a ping: maybe an outage, so nothing is split.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await events(projectId)).toBe(0);
    expect(batcher.buffered()).toBe(20);
    expect(quarantineLines(quarantineDir)).toEqual([]);
    expect(logs.some((l) => /failed \(attempt \d+, unknown error/.test(l))).toBe(true);

    state.pingUp = true;
    await expect.poll(() => batcher.buffered(), { timeout: 10_000, interval: 50 }).toBe(0);
    expect(Date.now() - started).toBeGreaterThan(1500);
    await batcher.close();
    expect(await events(projectId)).toBe(19);
    expect(batcher.quarantined()).toBe(1);
    const [refused, ...others] = quarantineLines(quarantineDir);
    expect(others).toEqual([]);
    expect(Number(refused.row.visitor_id) - 1).toBe(13);
    expect(refused.error).toMatch(/throwIf/);
  }, 60_000);
});
