import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient as createWebClient } from '@clickhouse/client-web';
import { Redis } from '@upstash/redis';
import { startClickHouseBridge } from '../../scripts/bridges/clickhouse-http.js';
import { startUpstashBridge } from '../../scripts/bridges/upstash-rest.js';
import { closeHarness, createHarness, TEST_REDIS_URL, unique, type Harness } from '../helpers/harness.js';
import { clickhouseSettings, type ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { rowsAsObjects, serverRowStore } from '../../src/adapters/row-store.js';
import { insertLines, rowLine } from '../../src/ingest/insert.js';

let h: Harness;
let ch: Awaited<ReturnType<typeof startClickHouseBridge>>;
let up: Awaited<ReturnType<typeof startUpstashBridge>>;
beforeAll(async () => {
  h = await createHarness();
  ch = await startClickHouseBridge({ clickhouse: h.deps.clickhouse });
  up = await startUpstashBridge({ redisUrl: TEST_REDIS_URL, token: 'bridge-token' });
});
afterAll(async () => {
  await ch.close();
  await up.close();
  await closeHarness();
});

describe('ClickHouse HTTP bridge', () => {
  it('answers @clickhouse/client-web queries with bound parameters, inserts and errors', async () => {
    const web = createWebClient({ url: ch.url, clickhouse_settings: { output_format_json_quote_64bit_integers: 1 } });
    const table = `bridge_${unique('t').replace(/-/g, '_')}`;
    await web.command({ query: 'CREATE TABLE ' + table + ' (id UInt64, name String) ENGINE = MergeTree ORDER BY id' });
    await web.insert({ table, values: [{ id: 1, name: "it's" }, { id: 2, name: 'b' }], format: 'JSONEachRow' });
    const rs = await web.query({
      query: 'SELECT id, name FROM ' + table + ' WHERE name != {skip:String} AND id IN {ids:Array(UInt64)} ORDER BY id',
      query_params: { skip: 'b', ids: [1, 2] },
      format: 'JSONEachRow',
    });
    expect(await rs.json()).toEqual([{ id: '1', name: "it's" }]);
    await expect(web.query({ query: 'SELECT nope FROM ' + table, format: 'JSONEachRow' })).rejects.toThrow(/nope/);
    expect((await web.ping()).success).toBe(true);
    await web.command({ query: 'DROP TABLE ' + table });
    await web.close();
  });
});

describe('the server row store over HTTP (CLICKHOUSE_URL)', () => {
  // The Node client streams the rows after the statement; client-web (Workers) sends them as text after it.
  const transports = {
    'Node client': async () => {
      const server = await connectNodeClickHouse({ url: ch.url, dataDir: '/nonexistent' });
      return { rowStore: server.rowStore, close: () => server.client.close() };
    },
    'client-web': async () => {
      const web = createWebClient({ url: ch.url, clickhouse_settings: clickhouseSettings });
      return { rowStore: serverRowStore(web as unknown as ClickHouseClient, rowsAsObjects), close: () => web.close() };
    },
  };
  for (const [label, connect] of Object.entries(transports)) {
    it(`${label}: inserts pre-encoded rows as the INSERT body, deduplicated by their token`, async () => {
      const { rowStore, close } = await connect();
      const projectId = unique('prj_http');
      const lines = [1, 2, 3].map((i) =>
        rowLine({ project_id: projectId, ts: `2026-01-0${i} 10:00:00.000`, kind: 'pageview', visitor_id: String(i), session_id: '7', path: `/p${i}`, hostname: 'h.example' }),
      );
      const token = unique('tok');
      await insertLines(rowStore, 'events', lines.join(''), { token });
      await insertLines(rowStore, 'events', lines.join(''), { token });
      const rs = await h.deps.clickhouse.query({
        query: 'SELECT path, visitor_id FROM events WHERE project_id = {p:String} ORDER BY path',
        query_params: { p: projectId },
        format: 'JSONEachRow',
      });
      expect(await rs.json()).toEqual([
        { path: '/p1', visitor_id: '1' },
        { path: '/p2', visitor_id: '2' },
        { path: '/p3', visitor_id: '3' },
      ]);
      expect(await rowStore.ping()).toBe(true);
      await close();
    });
  }
});

describe('Upstash REST bridge', () => {
  it('serves single commands, pipelines and transactions with base64 encoding', async () => {
    const redis = new Redis({ url: up.url, token: 'bridge-token', enableTelemetry: false });
    const key = `bridge:${unique('k')}`;
    await redis.set(key, { a: 1, s: 'ü' }, { ex: 60 });
    expect(await redis.get(key)).toEqual({ a: 1, s: 'ü' });
    const p = redis.pipeline();
    p.incr(`${key}:n`);
    p.incr(`${key}:n`);
    expect(await p.exec()).toEqual([1, 2]);
    const tx = redis.multi();
    tx.set(`${key}:t`, 'x');
    tx.get(`${key}:t`);
    expect(await tx.exec()).toEqual(['OK', 'x']);
    await expect(redis.incr(key)).rejects.toThrow(/not an integer|WRONGTYPE/);
    await redis.del(key, `${key}:n`, `${key}:t`);
  });

  it('refuses a wrong token', async () => {
    const res = await fetch(up.url, { method: 'POST', headers: { Authorization: 'Bearer nope' }, body: '["PING"]' });
    expect(res.status).toBe(401);
  });
});
