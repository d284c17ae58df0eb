import { describe, expect, it } from 'vitest';
import { EncodedRows, type RowStore } from '../../src/adapters/row-store.js';
import { createChunkParser, MAX_LINE_CHARS, parseLineBytes } from '../../src/ingest/import-chunk.js';
import type { ImportParserPool } from '../../src/ingest/import-pool.js';
import { CHUNK_BYTES, importNdjson, wholeLineChunks } from '../../src/ingest/import.js';

const project = { id: 'prj_importchunks000000001', domain: 'example.com' };
const line = (i: number) =>
  JSON.stringify({ timestamp: '2026-11-01T00:00:00Z', kind: 'pageview', visitorId: `v${i}`, sessionId: `s${i}`, url: `https://example.com/p${i}` });
const linesOf = (n: number) => Array.from({ length: n }, (_, i) => line(i)).join('\n') + '\n';

/** A stream handing over `pieces` one at a time. */
const streamOf = (pieces: Uint8Array[]) => {
  const left = [...pieces];
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = left.shift();
      if (next) controller.enqueue(next);
      else controller.close();
    },
  });
};

/** A parser pool that parses in this thread and counts the chunks it was handed. */
const countingParsers = () => {
  let parsed = 0;
  const parsers: ImportParserPool = {
    open: (p, columns) => {
      const parse = createChunkParser(p, columns);
      return {
        parse: async (bytes) => {
          parsed++;
          return parseLineBytes(parse, bytes);
        },
        close: () => {},
      };
    },
    close: async () => {},
  };
  return { parsers, parsedChunks: () => parsed };
};

const chunksOf = async (pieces: Uint8Array[]) => {
  const chunks: Buffer[] = [];
  for await (const chunk of wholeLineChunks(streamOf(pieces))) chunks.push(Buffer.from(chunk));
  return chunks;
};

describe('an import body cut into chunks of whole lines', () => {
  it('cuts a body that arrives in one piece, as a buffered request does, into chunks of at most CHUNK_BYTES at line ends', async () => {
    const body = Buffer.from(linesOf(60_000));
    expect(body.byteLength).toBeGreaterThan(4 * CHUNK_BYTES);
    const chunks = await chunksOf([body]);
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    for (const chunk of chunks) {
      expect(chunk.byteLength).toBeLessThanOrEqual(CHUNK_BYTES);
      expect(chunk.at(-1)).toBe(0x0a);
    }
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
  });

  it('gives the same lines whether the body comes in one piece or in 64 KB pieces', async () => {
    const body = Buffer.from(linesOf(20_000).slice(0, -1));
    const pieces = Array.from({ length: Math.ceil(body.byteLength / 65_536) }, (_, i) => body.subarray(i * 65_536, (i + 1) * 65_536));
    const whole = Buffer.concat(await chunksOf([body]));
    expect(whole.equals(body)).toBe(true);
    expect(Buffer.concat(await chunksOf(pieces)).equals(body)).toBe(true);
  });

  it('stands one over-long line in for a line of megabytes inside one piece, and keeps the lines around it', async () => {
    const huge = 'a'.repeat(3 * CHUNK_BYTES);
    const body = Buffer.from(`${line(1)}\n${huge}\n${line(2)}\n${'b'.repeat(2 * CHUNK_BYTES)}`);
    const text = Buffer.concat(await chunksOf([body])).toString();
    const lines = text.split('\n');
    expect(lines[0]).toBe(line(1));
    expect(lines[1]!.length).toBe(MAX_LINE_CHARS + 1);
    expect(lines[2]).toBe(line(2));
    expect(lines[3]!.length).toBe(MAX_LINE_CHARS + 1);
    expect(text.length).toBeLessThan(4 * MAX_LINE_CHARS);
  });
});

describe('an import whose body arrives in one piece', () => {
  it('inserts its first block while later chunks are still to be parsed', async () => {
    const { parsers, parsedChunks } = countingParsers();
    const parsedAtInsert: number[] = [];
    let rows = 0;
    const store: RowStore = {
      insert: async (_table, encoded, opts) => {
        parsedAtInsert.push(parsedChunks());
        // Import blocks run below reads' priority (README "Performance").
        expect(opts?.bulk).toBe(true);
        // Without RowBinary types the store gets JSONEachRow: a row a line.
        if (!(encoded instanceof EncodedRows)) throw new Error('expected encoded rows');
        rows += String(Buffer.from(encoded.bytes())).split('\n').filter(Boolean).length;
      },
      ping: async () => true,
    };
    const body = linesOf(100_000);
    expect(body.length).toBeGreaterThan(10 * CHUNK_BYTES);
    const result = await importNdjson(store, new Response(body).body!, { project, parsers, batchRows: 20_000 });
    expect(result).toEqual({ imported: 100_000, rejected: 0, errors: [] });
    expect(rows).toBe(100_000);
    expect(parsedAtInsert.length).toBe(5);
    expect(parsedAtInsert[0]).toBeLessThan(parsedChunks() / 2);
  });
});

describe('an import that steps aside for reads', () => {
  it('hands no chunk to a parser until beforeParse lets it, and asks before every chunk', async () => {
    const { parsers, parsedChunks } = countingParsers();
    const store: RowStore = { insert: async () => {}, ping: async () => true };
    let asked = 0;
    let letGo = () => {};
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const body = linesOf(30_000);
    const importing = importNdjson(store, new Response(body).body!, {
      project,
      parsers,
      beforeParse: () => {
        asked++;
        return held;
      },
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(asked).toBe(1);
    expect(parsedChunks()).toBe(0);
    letGo();
    expect(await importing).toEqual({ imported: 30_000, rejected: 0, errors: [] });
    expect(parsedChunks()).toBeGreaterThanOrEqual(3);
    expect(asked).toBe(parsedChunks());
  });
});
