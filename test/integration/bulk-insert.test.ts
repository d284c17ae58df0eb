import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncodedRows } from '../../src/adapters/row-store.js';
import { insertLines, rowLine } from '../../src/ingest/insert.js';
import { importNdjson } from '../../src/ingest/import.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(closeHarness);

const scalar = async (query: string, projectId: string) => {
  const rs = await h.deps.clickhouse.query({ query, query_params: { id: projectId }, format: 'JSONEachRow' });
  return Number((await rs.json<{ n: string }>())[0].n);
};

describe('bulk inserts through the spool file (bodies of 8 MB and more)', () => {
  it('stores every row once, in the table and its rollups, even when retried with the same token', async () => {
    const projectId = unique('prj_bulk');
    const rows = 20_000;
    // Long referrers push the body past the file threshold with few rows.
    const body = Array.from({ length: rows }, (_, i) =>
      rowLine({
        project_id: projectId,
        ts: `2025-02-${String(1 + (i % 28)).padStart(2, '0')} 12:${String(i % 60).padStart(2, '0')}:00.000`,
        kind: i % 4 === 3 ? 'leave' : 'pageview',
        visitor_id: String(1 + (i % 500)),
        session_id: String(1 + (i % 2000)),
        hostname: 'bulk.example',
        path: `/p${i % 40}`,
        referrer: `https://ref.example/${'x'.repeat(450)}?q=${i}`,
        referrer_source: 'ref.example',
        country_code: 'DE',
        country_name: 'Germany',
        duration_ms: i % 4 === 3 ? 1000 : 0,
        props: i % 2 ? { plan: "it's \"pro\"" } : {},
      }),
    ).join('');
    expect(body.length).toBeGreaterThan(8 << 20);
    const token = unique('bulk-token');
    await insertLines(h.deps.rowStore, 'events', body, { token, dateFormat: 'basic', bulk: true });
    await insertLines(h.deps.rowStore, 'events', body, { token, dateFormat: 'basic', bulk: true });
    expect(await scalar('SELECT count() AS n FROM events WHERE project_id = {id:String}', projectId)).toBe(rows);
    expect(await scalar('SELECT sum(pageviews) AS n FROM stats_15m WHERE project_id = {id:String}', projectId)).toBe(rows * 0.75);
    expect(await scalar('SELECT sum(pageviews) AS n FROM pages_1d WHERE project_id = {id:String}', projectId)).toBe(rows * 0.75);
    expect(await scalar("SELECT countIf(props['plan'] = 'it''s \"pro\"') AS n FROM events WHERE project_id = {id:String}", projectId)).toBe(rows / 2);
    // The spool file is gone once the insert ends.
    expect(readdirSync(join(h.deps.config.DATA_DIR, 'insert-spool'))).toEqual([]);
  });

  it('stores tabs, newlines, backslashes, quotes and non-ASCII text exactly, inline and from the spool file', async () => {
    const tricky = ["tab\there", 'new\nline\r\n', 'back\\slash \\N', "quote's \"both\"", 'Zürich 東京 😀', '\\', ''];
    for (const [label, copies] of [['inline', 1], ['spool', 40_000]] as const) {
      const projectId = unique(`prj_tricky_${label}`);
      const rows = Array.from({ length: copies * tricky.length }, (_, i) => {
        const text = tricky[i % tricky.length]!;
        return { project_id: projectId, ts: '2025-03-01 10:00:00.000', kind: 'custom', visitor_id: String(i + 1), session_id: '1', hostname: 'h.example', path: `/${text}`, event_name: text || 'empty', props: text ? { [text]: text, plain: 'v' } : undefined, lcp: i % 2 ? 0 : undefined };
      });
      const body = rows.map((r) => rowLine(r)).join('');
      expect(body.length >= 8 << 20).toBe(label === 'spool');
      await insertLines(h.deps.rowStore, 'events', body, { token: unique('tricky'), dateFormat: 'basic' });
      const rs = await h.deps.clickhouse.query({
        query: 'SELECT path, event_name, props, lcp FROM events WHERE project_id = {id:String} AND visitor_id <= 7 ORDER BY visitor_id',
        query_params: { id: projectId },
        format: 'JSONEachRow',
      });
      expect(await rs.json()).toEqual(
        rows.slice(0, 7).map((r) => ({ path: r.path, event_name: r.event_name, props: r.props ?? {}, lcp: r.lcp ?? null })),
      );
    }
  });

  it('refuses a table or column name that is not an identifier instead of writing it into SQL', async () => {
    const values = new EncodedRows({ body: rowLine({ project_id: 'x' }).repeat(1), columns: ['project_id'] });
    // Inline bodies go to chdb's raw insert, which checks identifiers itself.
    await expect(h.deps.rowStore.insert('events; DROP TABLE events', values)).rejects.toThrow(/Invalid insert target table/);
    const big = new EncodedRows({ body: rowLine({ project_id: 'x', referrer: 'r'.repeat(1000) }).repeat(9000), columns: ['project_id', 'referrer) SELECT 1 --'] });
    await expect(h.deps.rowStore.insert('events', big)).rejects.toThrow(/not an identifier/);
  });

  it('an import sent twice with the same batch id, its body split differently each time, is stored once', async () => {
    const projectId = unique('prj_resplit');
    const project = { id: projectId, domain: 'resplit.example' };
    const lines = Array.from({ length: 2000 }, (_, i) =>
      JSON.stringify({ timestamp: new Date(Date.UTC(2025, 5, 1, 0, 0, i)).toISOString(), kind: 'pageview', visitorId: `v${i % 50}`, sessionId: `s${i % 300}`, url: `https://resplit.example/p${i % 9}` }),
    );
    // A blank line and a bad one: they shift nothing in the blocks.
    lines.splice(700, 0, '', '{"not": "an event"}');
    const bytes = new TextEncoder().encode(lines.join('\n'));
    const streamOf = (chunkSize: number) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += chunkSize) controller.enqueue(bytes.subarray(at, at + chunkSize));
          controller.close();
        },
      });
    const first = await importNdjson(h.deps.rowStore, streamOf(97), { project, batchId: 'resplit', batchRows: 300 });
    const again = await importNdjson(h.deps.rowStore, streamOf(65_536), { project, batchId: 'resplit', batchRows: 300 });
    expect(first).toEqual({ imported: 2000, rejected: 1, errors: [{ line: 702, error: expect.any(String) }] });
    expect(again).toEqual(first);
    expect(await scalar('SELECT count() AS n FROM events WHERE project_id = {id:String}', projectId)).toBe(2000);
    expect(await scalar('SELECT sum(pageviews) AS n FROM pages_1d WHERE project_id = {id:String}', projectId)).toBe(2000);
  });
});

