import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { createClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { connectNodeClickHouse, type NodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { classifyInsertError, clickhouseErrorCode, insertErrorText, refusedRowOf } from '../../src/adapters/clickhouse-errors.js';
import { insertLines, rowLine } from '../../src/ingest/insert.js';
import { startClickHouseBridge } from '../../scripts/bridges/clickhouse-http.js';
import type { RunningBridge } from '../../scripts/bridges/listen.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';

// Every error classified here is a real one: thrown by the embedded engine, by the HTTP client
// talking to a ClickHouse HTTP interface (the bridge over the same engine), or by the HTTP client
// facing a refused, dropped, hanging or 503-answering endpoint.

let h: Harness;
let bridge: RunningBridge;
let overHttp: NodeClickHouse;
const servers: Server[] = [];

beforeAll(async () => {
  h = await createHarness();
  bridge = await startClickHouseBridge({ clickhouse: h.deps.clickhouse });
  overHttp = await connectNodeClickHouse({ url: bridge.url, dataDir: h.deps.config.DATA_DIR });
});
afterAll(async () => {
  await overHttp.client.close();
  await bridge.close();
  for (const s of servers) s.close();
  await closeHarness();
});

const good = (projectId: string) => ({ project_id: projectId, ts: '2025-01-01 00:00:00.000', kind: 'pageview', visitor_id: '1', session_id: '1', path: '/' });
/** Lines the engine refuses, with the exception code it refuses them with. */
const refused: [label: string, line: (projectId: string) => string, code: number][] = [
  ['a lone surrogate escape', (p) => rowLine({ ...good(p), path: 'x\ud800' }), 25],
  ['a timestamp that is not one', (p) => rowLine({ ...good(p), ts: 'not a date' }), 41],
  ['an unknown enum value', (p) => rowLine({ ...good(p), kind: 'bogus' }), 691],
  ['a number that is not one', (p) => rowLine({ ...good(p), visitor_id: 'abc' }), 27],
  ['a map that is a string', (p) => rowLine({ ...good(p), props: 'notamap' }), 27],
  ['a line that is not JSON', () => '{"project_id":"p", oops}\n', 26],
];

async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected the insert to fail');
}

const listening = async (server: Server) => {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
};

describe('insert errors of the real clients', () => {
  for (const [label, line, code] of refused) {
    it(`${label}: a data error from the embedded engine and over HTTP, and nothing stored`, async () => {
      const projectId = unique('prj_err');
      for (const store of [h.deps.rowStore, overHttp.rowStore]) {
        // Two good rows, then the refused one: the error names it (row 3).
        const body = rowLine(good(projectId)) + rowLine(good(projectId)) + line(projectId);
        const err = await failure(() => insertLines(store, 'events', body, { token: unique('tok') }));
        expect(clickhouseErrorCode(err)).toBe(code);
        expect(refusedRowOf(err)).toBe(3);
        expect(classifyInsertError(err)).toBe('data');
        expect(insertErrorText(err)).not.toMatch(/\n/);
      }
      const rs = await h.deps.clickhouse.query({ query: 'SELECT count() AS n FROM events WHERE project_id = {id:String}', query_params: { id: projectId }, format: 'JSONEachRow' });
      expect(Number((await rs.json<{ n: string }>())[0].n)).toBe(0);
    });
  }

  it('an unknown table is neither data nor transient', async () => {
    for (const ch of [h.deps.clickhouse, overHttp.client]) {
      const err = await failure(() => ch.command({ query: 'INSERT INTO no_such_table_here (x) VALUES (1)' }));
      expect(clickhouseErrorCode(err)).toBe(60);
      expect(classifyInsertError(err)).toBe('unknown');
    }
  });

  it('a refused connection, a dropped socket, a hanging server and a bare 503 are transient', async () => {
    const body = rowLine(good('prj_conn'));
    // Nothing listens on a port whose server was just closed.
    const closed = await listening(createHttpServer());
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    // Accepts the connection, reads the request, then drops it.
    const dropper = createTcpServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', () => r()));
    const dropped = `http://127.0.0.1:${(dropper.address() as { port: number }).port}`;
    // A proxy whose ClickHouse is gone: 503 with a plain body and no exception code.
    const unavailable = await listening(createHttpServer((req, res) => req.resume().on('end', () => res.writeHead(503).end('Service Unavailable'))));
    // Reads the request and never answers.
    const hanging = await listening(createHttpServer((req) => req.resume()));

    const errors: Record<string, unknown> = {};
    for (const [label, url] of [['refused', closed], ['dropped', dropped], ['unavailable', unavailable]] as const) {
      const ch = await connectNodeClickHouse({ url, dataDir: h.deps.config.DATA_DIR });
      errors[label] = await failure(() => insertLines(ch.rowStore, 'events', body, { token: unique('tok') }));
      await ch.client.close();
    }
    const slow = createClient({ url: hanging, request_timeout: 300 });
    errors.hanging = await failure(() => slow.insert({ table: 'events', values: [good('prj_conn')], format: 'JSONEachRow' }));
    await slow.close();
    dropper.close();

    expect((errors.refused as { code?: string }).code).toBe('ECONNREFUSED');
    expect((errors.dropped as Error).message).toMatch(/socket hang up|ECONNRESET/);
    expect((errors.unavailable as Error).message).toMatch(/Service Unavailable/);
    expect((errors.hanging as Error).message).toMatch(/Timeout/i);
    for (const [label, err] of Object.entries(errors)) {
      expect({ label, code: clickhouseErrorCode(err) }).toEqual({ label, code: undefined });
      expect({ label, kind: classifyInsertError(err) }).toEqual({ label, kind: 'transient' });
    }
  });

  it('names server-side overload codes transient, from the code or the message', () => {
    // The shapes the clients give (see above), with codes a busy server answers.
    expect(classifyInsertError(Object.assign(new Error('Memory limit (total) exceeded'), { code: '241', type: 'MEMORY_LIMIT_EXCEEDED' }))).toBe('transient');
    expect(classifyInsertError(Object.assign(new Error('Code: 252. DB::Exception: Too many parts (300)'), { clickhouseCode: 252, code: 'CHDB_INSERT' }))).toBe('transient');
    expect(classifyInsertError(new Error('Code: 252. DB::Exception: Too many parts'))).toBe('transient');
    expect(classifyInsertError(new Error('Code: 41. DB::Exception: Cannot read DateTime'))).toBe('data');
    expect(classifyInsertError(new Error('something else entirely'))).toBe('unknown');
    expect(classifyInsertError('not even an error')).toBe('unknown');
  });
});
