import { describe, expect, it } from 'vitest';
import { textLines } from '../../src/ingest/line-text.js';
import { seededRandom } from '../helpers/report-fixtures.js';

/** What the import decoded before: the whole chunk at once, then split. */
const reference = (bytes: Uint8Array) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes).split('\n');

const BOM = '\ufeff';

describe('textLines', () => {
  it('gives the lines of ASCII, UTF-8 and mixed chunks as decoding the whole chunk does', () => {
    for (const text of [
      '',
      '\n',
      '{"a":1}\n{"b":2}\n',
      '{"a":1}\n{"b":2}',
      '{"city":"München"}\n{"city":"Berlin"}\n{"city":"São Paulo"}\n',
      `${BOM}{"a":1}\n${BOM}{"city":"Zürich"}\n\n\n{"e":"😀"}`,
      'x\r\n\ny\n',
    ]) {
      const bytes = Buffer.from(text);
      expect(textLines(bytes)).toEqual(reference(bytes));
      expect(textLines(bytes).join('\n')).toBe(text);
    }
  });

  it('replaces invalid UTF-8 exactly as decoding the whole chunk does: overlong, truncated at a line end, lone surrogates, stray bytes', () => {
    const bad = [
      [0x7b, 0xc0, 0xaf, 0x7d, 0x0a, 0x61, 0xe2, 0x82, 0x0a, 0x62],
      [0xed, 0xa0, 0x80, 0x0a, 0xf0, 0x9f, 0x98, 0x0a, 0xff, 0xfe, 0x0a],
      [0x61, 0x0a, 0xf4, 0x90, 0x80, 0x80, 0x0a, 0x80],
    ];
    for (const b of bad) {
      const bytes = new Uint8Array(b);
      expect(textLines(bytes)).toEqual(reference(bytes));
    }
  });

  it('agrees with decoding the whole chunk on random bytes (newlines, ASCII, and every high byte)', () => {
    const random = seededRandom(41);
    for (let n = 0; n < 2000; n++) {
      const bytes = new Uint8Array(random.int(0, 64));
      for (let i = 0; i < bytes.length; i++) {
        const r = random.next();
        bytes[i] = r < 0.15 ? 0x0a : r < 0.6 ? random.int(0x20, 0x7e) : random.int(0x80, 0xff);
      }
      expect(textLines(bytes)).toEqual(reference(bytes));
    }
  });

  it('reads a view into a larger buffer from its own offset', () => {
    const whole = Buffer.from('skip\n{"a":1}\n{"c":"ä"}\nafter');
    const view = whole.subarray(5, whole.indexOf('after'));
    expect(textLines(view)).toEqual(['{"a":1}', '{"c":"ä"}', '']);
    expect(textLines(new Uint8Array(whole.buffer, whole.byteOffset + 5, 8))).toEqual(['{"a":1}', '']);
  });
});
