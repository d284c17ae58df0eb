import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell, csvComment, csvRow, csvSection } from '../../src/export/csv.js';

const parseCsv = (text: string): string[][] => parse(text, { comment: '#', skip_empty_lines: true });

describe('csvCell', () => {
  it('leaves plain text, numbers and empties as they are', () => {
    expect(csvCell('/pricing')).toBe('/pricing');
    expect(csvCell(42)).toBe('42');
    expect(csvCell(0.25)).toBe('0.25');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(Number.NaN)).toBe('');
  });

  it('quotes commas, quotes, CR, LF and # with doubled quotes (RFC 4180)', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line1\nline2')).toBe('"line1\nline2"');
    expect(csvCell('a\r\nb')).toBe('"a\r\nb"');
    expect(csvCell('/docs#install')).toBe('"/docs#install"');
  });

  it.each([
    ['=SUM(A1)', `"'=SUM(A1)"`],
    ['+1', `"'+1"`],
    ['-1+2', `"'-1+2"`],
    ['@cmd', `"'@cmd"`],
    ['\tcalc', `"'\tcalc"`],
    ['\rcalc', `"'\rcalc"`],
    ['=HYPERLINK("http://x","y")', `"'=HYPERLINK(""http://x"",""y"")"`],
  ])('neutralizes the formula %j and quotes it', (input, expected) => {
    expect(csvCell(input)).toBe(expected);
  });

  it('writes negative numbers as numbers (only strings are neutralized)', () => {
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('-5')).toBe(`"'-5"`);
  });
});

describe('csvComment', () => {
  it('starts with "# " and never spans lines', () => {
    expect(csvComment('pages')).toBe('# pages\r\n');
    const line = csvComment('evil\r\n=1,2\nnext\u2028x');
    expect(line).toBe('# evil =1,2 next x\r\n');
    expect(line.slice(0, -2)).not.toMatch(/[\r\n]/);
  });
});

describe('csvSection', () => {
  it('writes a comment line, a header row and one row per item', () => {
    const text = csvSection('pages', [
      { header: 'path', value: (r: { path: string; n: number }) => r.path },
      { header: 'pageviews', value: (r) => r.n },
    ], [{ path: '/a', n: 3 }, { path: '=cmd', n: -1 }]);
    expect(text).toBe(`# pages\r\npath,pageviews\r\n/a,3\r\n"'=cmd",-1\r\n`);
  });
});

describe('round trip through csv-parse', () => {
  it('any strings and numbers come back (strings with a leading quote when dangerous)', () => {
    const cell = fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 8 }), fc.string(), (rows, title) => {
        const text = csvComment(title) + csvRow(['a', 'b', 'c']) + rows.map(csvRow).join('') + '\r\n' + csvComment('next');
        const parsed = parseCsv(text);
        expect(parsed[0]).toEqual(['a', 'b', 'c']);
        const expected = rows.map((r) =>
          r.map((v) => (typeof v === 'number' ? String(v) : /^[=+\-@\t\r]/.test(v) ? `'${v}` : v)),
        );
        expect(parsed.slice(1)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});
