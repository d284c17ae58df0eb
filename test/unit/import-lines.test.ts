import { describe, expect, it } from 'vitest';
import { createChunkParser, parseLineBytes } from '../../src/ingest/import-chunk.js';

const project = { id: 'prj_importlines0000000001', domain: 'example.com' };
const line = (i: number) =>
  JSON.stringify({ timestamp: '2026-11-01T00:00:00Z', kind: 'pageview', visitorId: `v${i}`, sessionId: `s${i}`, url: `https://example.com/p${i}` });
const BOM = '\ufeff';

describe('import lines opening with a byte order mark', () => {
  it('are read as the same line without it, wherever they stand in a chunk (a file’s own mark, or files joined)', () => {
    const plain = parseLineBytes(createChunkParser(project), Buffer.from(`${line(1)}\n${line(2)}\n${line(3)}\n`));
    expect(plain.rejected).toBe(0);
    for (const marked of [
      `${BOM}${line(1)}\n${line(2)}\n${line(3)}\n`,
      `${line(1)}\n${BOM}${line(2)}\n${line(3)}\r\n`,
      `${BOM}${line(1)}\n${BOM}${line(2)}\n${BOM}${line(3)}`,
    ]) {
      const parsed = parseLineBytes(createChunkParser(project), Buffer.from(marked));
      expect({ rejected: parsed.rejected, errors: parsed.errors }).toEqual({ rejected: 0, errors: [] });
      expect(Buffer.from(parsed.bytes).toString()).toBe(Buffer.from(plain.bytes).toString());
    }
  });

  it('count a line holding only the mark as blank, and refuse a mark anywhere else in a line', () => {
    const parsed = parseLineBytes(createChunkParser(project), Buffer.from(`${BOM}\n${line(1)}${BOM}\n{${BOM}}\n`));
    expect(parsed.errors.map((e) => e.line)).toEqual([2, 3]);
    // Two marks: one is dropped, the other refused — at a chunk's start as in its middle.
    for (const twice of [`${BOM}${BOM}${line(1)}\n${line(2)}\n`, `${line(2)}\n${BOM}${BOM}${line(1)}\n`]) {
      expect(parseLineBytes(createChunkParser(project), Buffer.from(twice)).rejected).toBe(1);
    }
  });
});
