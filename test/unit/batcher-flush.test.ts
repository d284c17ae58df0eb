import { describe, expect, it } from 'vitest';
import { EncodedRows, type RowStore, type Rows } from '../../src/adapters/row-store.js';
import { createBatcher } from '../../src/ingest/batcher.js';

/** A row store that takes `insertMs` per insert and keeps the paths it was given. */
function slowStore(insertMs: number): RowStore & { paths: string[] } {
  const paths: string[] = [];
  const text = (rows: Rows) => (rows instanceof EncodedRows ? (typeof rows.body === 'string' ? rows.body : new TextDecoder().decode(rows.body)) : rows.map((r) => JSON.stringify(r)).join('\n'));
  return {
    paths,
    async insert(_table, rows) {
      await new Promise((r) => setTimeout(r, insertMs));
      for (const line of text(rows).split('\n')) if (line) paths.push(String((JSON.parse(line) as { path: string }).path));
    },
    ping: async () => true,
  };
}

describe('batcher flush under a steady stream of events', () => {
  it('ends once what was written before it is in, though events keep arriving faster than inserts finish', async () => {
    const store = slowStore(40);
    const sink = createBatcher(store, { flushIntervalMs: 60_000 });
    let n = 0;
    const write = () => sink.write('events', [{ project_id: 'p', ts: '2026-11-26 00:00:00.000', kind: 'pageview', visitor_id: 1, session_id: 1, path: `/e${n++}` }]);
    const stream = setInterval(() => void write(), 5);
    try {
      for (let i = 0; i < 5; i++) await write();
      // Each write seals nothing by itself (60 s timer): flush seals, and every 5 ms a new row arrives meanwhile.
      for (let round = 0; round < 3; round++) {
        const before = n;
        const started = performance.now();
        await sink.flush();
        expect(performance.now() - started).toBeLessThan(2000);
        for (let i = 0; i < before; i++) expect(store.paths).toContain(`/e${i}`);
      }
    } finally {
      clearInterval(stream);
      await sink.close();
    }
    // Close leaves nothing behind: every row written is in.
    expect(new Set(store.paths).size).toBe(n);
  });
});

describe('batcher batches', () => {
  it('carry the earliest stamp of their rows (unknown once a row or event has none, or an event no session floor), so a batch of this hour leaves closed hours alone, and their latest `ts` (unknown once a row has none)', async () => {
    const seen: (string | undefined)[] = [];
    const latest: (string | undefined)[] = [];
    const store: RowStore = {
      async insert(_table, rows) {
        seen.push(rows instanceof EncodedRows ? rows.earliest : 'objects');
        latest.push(rows instanceof EncodedRows ? rows.latest : 'objects');
      },
      ping: async () => true,
    };
    const sink = createBatcher(store, { flushIntervalMs: 60_000 });
    const row = (ts: unknown, floor = 1_764_115_200) => ({ project_id: 'p', ts, kind: 'pageview', visitor_id: 1, session_id: 1, session_floor: floor, path: '/' });
    try {
      await sink.write('events', [row('2026-11-26 10:00:00.000'), row('2026-11-25 23:59:59.999'), row('2026-11-26 00:00:00.000')]);
      await sink.flush();
      await sink.write('events', [row('2026-11-26 11:00:00.000')]);
      await sink.flush();
      await sink.write('events', [row('2026-11-26 12:00:00.000'), row(undefined)]);
      await sink.flush();
      await sink.write('events', [row('2026-11-26 13:00:00.000'), row('2026-11-26 13:00:00.000', 0)]);
      await sink.flush();
    } finally {
      await sink.close();
    }
    expect(seen).toEqual(['2026-11-25 23:59:59.999', '2026-11-26 11:00:00.000', undefined, undefined]);
    expect(latest).toEqual(['2026-11-26 10:00:00.000', '2026-11-26 11:00:00.000', undefined, '2026-11-26 13:00:00.000']);
  });
});
