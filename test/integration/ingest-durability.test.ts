import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RowStore } from '../../src/adapters/row-store.js';
import { createBatcher } from '../../src/ingest/batcher.js';
import type { EventSink } from '../../src/ingest/sink.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

/** The real store, except that its first `failures` inserts throw (ClickHouse "down"). */
function failingFirstInserts(real: RowStore, failures: number) {
  const state = { calls: 0, failed: 0 };
  const store: RowStore = {
    ...real,
    async insert(table, rows, opts) {
      state.calls++;
      if (state.failed < failures) {
        state.failed++;
        throw new Error('connect ECONNREFUSED 127.0.0.1:8123 (test double)');
      }
      return real.insert(table, rows, opts);
    },
  };
  return { store, state };
}

let h: Harness;
let owner: TestUser;
let sink: EventSink & { buffered(): number };
let double: ReturnType<typeof failingFirstInserts>;
const logs: string[] = [];

async function scalar(query: string, params: Record<string, unknown>): Promise<number> {
  const rs = await h.deps.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row.n);
}

beforeAll(async () => {
  h = await createHarness({
    env: { TRUST_PROXY: '1', INGEST_IP_PER_MIN: '1000000', INGEST_PROJECT_PER_SEC: '1000000' },
    sink: (deps) => {
      double = failingFirstInserts(deps.rowStore, 6);
      sink = createBatcher(double.store, { maxBatchRows: 1000, flushIntervalMs: 100, retryDelayMs: 30, maxRetryDelayMs: 200, log: (l) => logs.push(l) });
      return sink;
    },
  });
  owner = await h.user('durable');
});
afterAll(async () => {
  await sink.close();
  await closeHarness();
});

describe('batching and durability', () => {
  it('10 000 events with ClickHouse failing the first inserts → exactly 10 000 rows', async () => {
    const domain = h.domain('dur');
    const site = (await (await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Dur', domain } })).json()).id;
    const total = 10_000;
    let next = 0;
    const statuses = new Map<number, number>();
    const worker = async () => {
      while (next < total) {
        const i = next++;
        const res = await h.app.request('/api/event', {
          method: 'POST',
          headers: { 'Content-Type': 'text/plain', 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'X-Forwarded-For': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` },
          body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/page/${i % 50}` }),
        });
        expect(res.headers.get('x-sightline-dropped')).toBeNull();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
    expect(Object.fromEntries(statuses)).toEqual({ 202: total });

    await sink.flush();
    expect(double.state.failed).toBe(6);
    expect(logs.some((l) => /insert into events failed/.test(l))).toBe(true);
    expect(logs.some((l) => /recovered/.test(l))).toBe(true);
    expect(sink.buffered()).toBe(0);
    expect(await scalar('SELECT count() AS n FROM events WHERE project_id = {id:String}', { id: site })).toBe(total);
    expect(await scalar('SELECT sum(pageviews) AS n FROM stats_15m WHERE project_id = {id:String}', { id: site })).toBe(total);
    expect(await scalar('SELECT sum(pageviews) AS n FROM pages_15m WHERE project_id = {id:String}', { id: site })).toBe(total);
  }, 180_000);

  it('a retried batch that did reach ClickHouse is stored once (same token)', async () => {
    const domain = h.domain('tok');
    const site = (await (await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Tok', domain } })).json()).id;
    // The insert lands but its answer is lost: the batcher must retry, and the token must dedupe it.
    let lost = 0;
    const flaky: RowStore = {
      ...h.deps.rowStore,
      async insert(table, rows, opts) {
        await h.deps.rowStore.insert(table, rows, opts);
        if (lost++ < 2) throw new Error('socket hang up (test double)');
      },
    };
    const own = createBatcher(flaky, { retryDelayMs: 10, log: () => {} });
    const rows = Array.from({ length: 300 }, (_, i) => ({ project_id: site, ts: '2024-05-01 10:00:00.000', kind: 'pageview', visitor_id: String(i), session_id: String(i), path: '/' }));
    await own.write('events', rows);
    await own.close();
    expect(lost).toBe(3);
    expect(await scalar('SELECT count() AS n FROM events WHERE project_id = {id:String}', { id: site })).toBe(300);
    expect(await scalar('SELECT sum(pageviews) AS n FROM stats_15m WHERE project_id = {id:String}', { id: site })).toBe(300);
  });

  it('refuses writes beyond its bound while ClickHouse is down, and the endpoint answers 503', async () => {
    const down: RowStore = {
      ...h.deps.rowStore,
      async insert() {
        throw new Error('down (test double)');
      },
    };
    const lines: string[] = [];
    const bounded = createBatcher(down, { maxBufferedRows: 5, flushIntervalMs: 20, retryDelayMs: 10, log: (l) => lines.push(l) });
    const small = await createHarness({ env: { TRUST_PROXY: '1' }, sink: () => bounded });
    const domain = small.domain('full');
    const site = (await (await small.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Full', domain } })).json()).id;
    const send = (i: number) =>
      small.app.request('/api/event', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': `10.9.9.${i}` },
        body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/` }),
      });
    for (let i = 0; i < 5; i++) expect((await send(i)).status).toBe(202);
    const refused = await send(99);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: 'Service temporarily unavailable' });
    expect(bounded.buffered()).toBe(5);
    expect(lines.some((l) => /buffer full/.test(l))).toBe(true);
  });
});
