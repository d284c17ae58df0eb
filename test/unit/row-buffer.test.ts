import { describe, expect, it } from 'vitest';
import { RowBuffer, rowLine } from '../../src/ingest/insert.js';

describe('RowBuffer', () => {
  it('holds exactly the UTF-8 of the joined row lines, growing past its first size', () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ path: `/p${i}`, city: i % 3 ? 'Zürich' : '東京', note: i % 7 ? undefined : '😀\n"quoted"' }));
    const buffer = new RowBuffer(8);
    for (const row of rows) buffer.append(row);
    expect(buffer.rows).toBe(500);
    expect(new TextDecoder().decode(buffer.bytes())).toBe(rows.map(rowLine).join(''));
  });

  it('leaves out undefined fields, so the column default applies', () => {
    expect(rowLine({ a: 'x', b: undefined, c: 0 })).toBe('{"a":"x","c":0}\n');
  });
});
