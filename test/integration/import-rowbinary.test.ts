import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChunkParser, IMPORT_COLUMNS, importRowColumns } from '../../src/ingest/import-chunk.js';
import { importNdjson } from '../../src/ingest/import.js';
import { createImportWorkerPool } from '../../src/ingest/import-pool.js';
import { insertLines, TABLE_COLUMNS } from '../../src/ingest/insert.js';
import { RowBinaryWriter, rowBinaryEncoder, writerFor } from '../../src/adapters/rowbinary.js';
import { hashToUInt64, hashToUInt64Words } from '../../src/ingest/enrich/visitor.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(closeHarness);

const base = {
  timestamp: '2024-05-01T12:30:00.123Z',
  kind: 'pageview',
  visitorId: 'v1',
  sessionId: 's1',
  url: 'https://example.com/a',
};

// Lines that reach every column and every writer branch: non-ASCII and 128+ character strings,
// props, all vitals (0 included), negative amounts, the last millisecond DateTime64 holds. (Times
// older than the retention are dropped by the table's TTL on either path, so none are used.)
const fixed = [
  base,
  { ...base, url: 'https://example.com/caf%C3%A9?utm_source=news&utm_medium=mail&utm_campaign=launch&utm_term=t&utm_content=c#x', referrer: 'https://www.google.com/search?q=ü' },
  { ...base, kind: 'leave', durationMs: 1500.6, countryCode: 'DE', region: 'Baden-Württemberg', city: 'Tübingen', browser: 'Firefox', os: 'Linux', device: 'Desktop' },
  { ...base, kind: 'custom', name: 'Signup 🚀', props: { plan: 'pro', seats: 3, trial: true, note: 'ü'.repeat(200) } },
  { ...base, kind: 'transaction', name: 'Refund', amountCents: -1999, currency: 'EUR' },
  { ...base, kind: 'vitals', vitals: { lcp: 2500.5, inp: 0, cls: 0.05, fcp: 0.1, ttfb: 120 } },
  { ...base, kind: 'vitals', vitals: { lcp: 1200 } },
  { ...base, timestamp: '2025-12-31T23:59:59.999Z', visitorId: 'x'.repeat(128), sessionId: 'ß' },
  { ...base, timestamp: '2299-12-31T23:59:59.999Z', url: `https://example.com/${'p'.repeat(300)}` },
];

const text = fc.string({ unit: 'grapheme', maxLength: 140 });
const generated = fc.record(
  {
    kind: fc.constantFrom('pageview', 'leave', 'custom'),
    visitorId: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
    region: text,
    city: text,
    browser: text,
    name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }),
    props: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.oneof(text, fc.integer(), fc.boolean()), { maxKeys: 5 }),
    durationMs: fc.nat({ max: 4_294_967_295 }),
    // Two years: the table is partitioned by month, and one insert may touch at most 100 partitions.
    ms: fc.integer({ min: Date.now() - 700 * 86_400_000, max: Date.now() + 30 * 86_400_000 }),
  },
  { requiredKeys: ['kind', 'visitorId', 'ms', 'name'] },
);

/** Every stored column of a project's rows, sorted, without the project id. */
async function storedRows(projectId: string): Promise<string[]> {
  const rs = await h.deps.clickhouse.query({
    query: 'SELECT * EXCEPT (project_id) FROM events WHERE project_id = {p:String}',
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  return (await rs.json<Record<string, unknown>>()).map((r) => JSON.stringify(r)).sort();
}

describe('RowBinary import rows', () => {
  it('is what the embedded engine is offered, built from the events table’s own column types', async () => {
    expect(h.deps.rowStore.rowBinaryTypes).toBeTypeOf('function');
    expect((await importRowColumns(h.deps.rowStore))?.map((c) => c.name)).toContain('visitor_id');
  });

  it('stores exactly what the same lines store as JSONEachRow, in every column', async () => {
    const extra = fc.sample(generated, { numRuns: 300, seed: 42 }).map((g) => ({
      ...base,
      ...g,
      sessionId: `${g.visitorId}-s`,
      timestamp: new Date(g.ms).toISOString(),
      name: g.kind === 'custom' ? g.name : undefined,
      props: g.kind === 'custom' ? g.props : undefined,
      durationMs: g.kind === 'leave' ? g.durationMs : undefined,
    }));
    const lines = [...fixed, ...extra].map((l) => JSON.stringify(l));
    const [a, b] = [unique('prj-bin'), unique('prj-json')];
    const binary = createChunkParser({ id: a, domain: 'example.com' }, await importRowColumns(h.deps.rowStore))(lines, 1);
    const json = createChunkParser({ id: b, domain: 'example.com' })(lines, 1);
    expect(binary.errors).toEqual([]);
    expect(json.errors).toEqual([]);

    await insertLines(h.deps.rowStore, 'events', binary.bytes, { token: unique('t'), format: 'RowBinary', columns: IMPORT_COLUMNS, dateFormat: 'basic' });
    await insertLines(h.deps.rowStore, 'events', json.bytes, { token: unique('t'), columns: IMPORT_COLUMNS, dateFormat: 'basic' });
    const [fromBinary, fromJson] = [await storedRows(a), await storedRows(b)];
    expect(fromBinary.length).toBe(lines.length);
    expect(fromBinary).toEqual(fromJson);
  }, 120_000);

  it('goes through a whole import, deduplicated when sent again with the same batch id', async () => {
    const project = { id: unique('prj'), domain: 'example.com' };
    const body = fixed.map((l) => JSON.stringify(l)).join('\n');
    const send = () => importNdjson(h.deps.rowStore, new Response(body).body!, { project, batchId: 'same' });
    expect(await send()).toEqual({ imported: fixed.length, rejected: 0, errors: [] });
    await send();
    expect((await storedRows(project.id)).length).toBe(fixed.length);
  });

  it('writes any UInt64 decimal exactly, and refuses what is not one', () => {
    const values = ['0', '1', '999999999', '1000000000', '4294967295', '4294967296', '9007199254740993', '18446744073709551615'];
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (n) => void values.push(n.toString())), { numRuns: 2000 });
    for (const decimal of values) {
      const w = new RowBinaryWriter(8);
      w.uint64(decimal);
      expect(Buffer.from(w.bytes()).readBigUInt64LE(0)).toBe(BigInt(decimal));
    }
    for (const bad of ['18446744073709551616', '-1', '1e5', '', '123456789012345678901']) expect(() => new RowBinaryWriter(8).uint64(bad), bad).toThrow(/not a UInt64/);
  });

  it('writes a hashed id from its words as the same bytes as from its decimal text', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        const id = hashToUInt64Words(text);
        const [fromWords, fromText] = [new RowBinaryWriter(8), new RowBinaryWriter(8)];
        writerFor('UInt64')(fromWords, id);
        writerFor('UInt64')(fromText, hashToUInt64(text));
        expect(Buffer.from(fromWords.bytes())).toEqual(Buffer.from(fromText.bytes()));
        // JSON rows carry the decimal text.
        expect(JSON.parse(JSON.stringify({ id }))).toEqual({ id: hashToUInt64(text) });
      }),
      { numRuns: 2000 },
    );
  });

  it('writes every events column a live row sets, session_floor (DateTime: seconds) included', async () => {
    const projectId = unique('prj');
    const types = await h.deps.rowStore.rowBinaryTypes!('events');
    const encode = rowBinaryEncoder(TABLE_COLUMNS.events.map((name) => ({ name, type: types.get(name)! })));
    const w = new RowBinaryWriter(64);
    // Recent: rows older than the retention would be dropped by the TTL.
    const ts = Math.floor(Date.now() / 1000) * 1000 + 123;
    const floor = ts / 1000 - 1800.123;
    encode(w, { project_id: projectId, ts, kind: 'pageview', visitor_id: '1', session_id: '2', session_floor: floor, path: '/' });
    const columns = TABLE_COLUMNS.events;
    await insertLines(h.deps.rowStore, 'events', w.bytes(), { token: unique('t'), format: 'RowBinary', columns, projectIds: [projectId] });
    const rs = await h.deps.clickhouse.query({
      query: 'SELECT toUnixTimestamp(session_floor) AS floor, toUnixTimestamp64Milli(ts) AS ts, path FROM events WHERE project_id = {projectId:String}',
      query_params: { projectId },
      format: 'JSONEachRow',
    });
    expect(await rs.json()).toEqual([{ floor, ts: String(ts), path: '/' }]);
  });

  it('writes the same bytes compiled as with the plain loop (the fallback of edge runtimes)', async () => {
    const columns = (await importRowColumns(h.deps.rowStore))!;
    const [compiled, loop] = [rowBinaryEncoder(columns), rowBinaryEncoder(columns, { compile: false })];
    expect(compiled.name).toBe('encodeRow');
    const [a, b] = [new RowBinaryWriter(64), new RowBinaryWriter(64)];
    const rows = [
      { ts: 1_700_000_000_123, kind: 'custom', visitor_id: '18446744073709551615', session_id: '7', path: '/é', props: { a: 'b' }, amount_cents: -5, lcp: 1.5 },
      { ts: 0, kind: 'pageview', visitor_id: '0', session_id: '1', city: 'x'.repeat(300) },
    ];
    for (const row of rows) {
      compiled(a, row);
      loop(b, row);
    }
    expect(Buffer.from(a.bytes()).equals(Buffer.from(b.bytes()))).toBe(true);
    expect(a.rows).toBe(2);
    expect(() => rowBinaryEncoder([{ name: 'x); process.exit(', type: 'String' }])).toThrow(/not a column identifier/);
  });

  it('stores an import whose events span more than 100 months', async () => {
    const project = { id: unique('prj'), domain: 'example.com' };
    // Forward from now: rows older than the retention would be dropped by the TTL.
    const start = new Date();
    const body = Array.from({ length: 130 }, (_, i) => JSON.stringify({ ...base, timestamp: new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + i, 15)).toISOString() })).join('\n');
    expect(await importNdjson(h.deps.rowStore, new Response(body).body!, { project })).toEqual({ imported: 130, rejected: 0, errors: [] });
    expect((await storedRows(project.id)).length).toBe(130);
  }, 120_000);

  it('refuses a line of megabytes without holding it, and still numbers the lines after it', async () => {
    const project = { id: unique('prj'), domain: 'example.com' };
    const good = JSON.stringify(base);
    const huge = new Uint8Array(3 << 20).fill(0x61);
    // Sent in 64 KB pieces, as a network would.
    const pieces = [Buffer.from(`${good}\n`), ...Array.from({ length: 48 }, (_, i) => huge.subarray(i << 16, (i + 1) << 16)), Buffer.from(`\n${good}\n{oops\n`), huge.subarray(0, 2 << 20)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = pieces.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    expect(await importNdjson(h.deps.rowStore, body, { project })).toEqual({
      imported: 2,
      rejected: 3,
      errors: [
        { line: 2, error: 'line is longer than 65536 characters' },
        { line: 4, error: 'line is not valid JSON' },
        { line: 5, error: 'line is longer than 65536 characters' },
      ],
    });
  });

  it('refuses a ClickHouse type it has no writer for, and an enum value outside the enum', () => {
    expect(() => writerFor('Decimal(10, 2)')).toThrow(/no RowBinary writer for ClickHouse type Decimal\(10, 2\)/);
    const encode = rowBinaryEncoder([{ name: 'kind', type: "Enum8('pageview' = 1, 'leave' = 2)" }]);
    expect(() => encode(new RowBinaryWriter(16), { kind: 'click' })).toThrow(/click is not a member/);
  });

  it('writes strings as varint length and UTF-8 bytes, and integers little-endian', () => {
    const w = new RowBinaryWriter(4);
    w.string('ab');
    w.string('é');
    w.string('x'.repeat(130));
    w.int64(-2);
    w.uint64('18446744073709551615');
    const bytes = Buffer.from(w.bytes());
    expect([...bytes.subarray(0, 3)]).toEqual([2, 0x61, 0x62]);
    expect([...bytes.subarray(3, 6)]).toEqual([2, 0xc3, 0xa9]);
    // 130 = 0x82 → varint 0x82 0x01.
    expect([...bytes.subarray(6, 8)]).toEqual([0x82, 0x01]);
    expect(bytes.readBigInt64LE(138)).toBe(-2n);
    expect(bytes.readBigUInt64LE(146)).toBe(2n ** 64n - 1n);
  });
});

describe('import parsed in worker threads', () => {
  it('keeps an import going on a worker that replaced the one it started on', async () => {
    const pool = createImportWorkerPool(1);
    try {
      const session = pool.open({ id: unique('prj'), domain: 'example.com' });
      const chunk = () => Buffer.from(`${JSON.stringify(base)}\n`);
      expect((await session.parse(chunk())).ends.length).toBe(1);
      // Terminating the workers stands in for one that died: the next chunk starts a new worker.
      await pool.close();
      expect((await session.parse(chunk())).ends.length).toBe(1);
      session.close();
    } finally {
      await pool.close();
    }
  });

  it('answers and stores what the request thread does, error line numbers included, over many chunks', async () => {
    const pool = createImportWorkerPool(2);
    try {
      // ~3 MB: several 1 MB chunks, so chunks alternate between the two workers and must come back in order.
      const lines: string[] = [];
      for (let i = 0; i < 12_000; i++) {
        if (i % 997 === 5) lines.push(i % 2 ? '{"broken":' : JSON.stringify({ ...base, kind: 'click' }));
        else lines.push(JSON.stringify({ ...base, visitorId: `v${i % 300}`, sessionId: `s${i}`, url: `https://example.com/p${i % 40}?q=${'x'.repeat(i % 200)}`, city: i % 3 ? 'Zürich' : undefined }));
      }
      const body = `${lines.join('\n')}\n\n`;
      const [inThread, inWorkers] = [{ id: unique('prj-inline'), domain: 'example.com' }, { id: unique('prj-workers'), domain: 'example.com' }];
      const inline = await importNdjson(h.deps.rowStore, new Response(body).body!, { project: inThread });
      const pooled = await importNdjson(h.deps.rowStore, new Response(body).body!, { project: inWorkers, parsers: pool });
      expect(pooled).toEqual(inline);
      expect(pooled.rejected).toBe(13);
      expect(pooled.errors[0]).toEqual({ line: 6, error: 'line is not valid JSON' });
      expect(pooled.errors.map((e) => e.line)).toEqual(lines.flatMap((l, i) => (l.includes('"broken"') || l.includes('"click"') ? [i + 1] : [])));
      expect(await storedRows(inWorkers.id)).toEqual(await storedRows(inThread.id));
    } finally {
      await pool.close();
    }
  });
});
