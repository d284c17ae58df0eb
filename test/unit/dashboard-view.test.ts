import { describe, expect, it } from 'vitest';
import { parseFilters as serverParse } from '../../src/analysis/filters.js';
import { csvCell as serverCell } from '../../src/export/csv.js';
import { csvCell, toCsv } from '../../src/dashboard/client/csv.js';
import { apiParams, formatFilters, parseFilters, parseView, viewQuery, withFilter, withoutFilter, type Filter, type View } from '../../src/dashboard/client/view.js';

const tricky: Filter[] = [
  { dimension: 'source', op: 'is', values: ['google.com', 'a|b'] },
  { dimension: 'page', op: 'is_not', values: ['/x;y', '/back\\slash'] },
  { dimension: 'prop:a=b!c~d', op: 'contains', values: ['=x', '~'] },
  { dimension: 'utmCampaign', op: 'is', values: [''] },
];

describe('dashboard view (URL and filters)', () => {
  it('writes filters the server parses to the same conditions, and reads them back', () => {
    const text = formatFilters(tricky);
    expect(serverParse(text)).toEqual(tricky.map((f) => ({ op: f.op, dimension: f.dimension, values: f.values })));
    expect(parseFilters(text)).toEqual(tricky);
  });

  it('round-trips a view through the hash query, leaving defaults out', () => {
    const view: View = { period: 'custom', from: '2026-03-03', to: '2026-03-09', compare: 'year_over_year', filters: tricky };
    expect(parseView(new URLSearchParams(viewQuery(view)))).toEqual(view);
    expect(viewQuery({ period: '30d', filters: [] })).toBe('');
    expect(parseView(new URLSearchParams(''))).toEqual({ period: '30d', filters: [] });
  });

  it('falls back on malformed links: a custom range needs two ordered dates, unknown values are dropped', () => {
    expect(parseView(new URLSearchParams('period=custom&from=2026-03-09&to=2026-03-03')).period).toBe('30d');
    expect(parseView(new URLSearchParams('period=forever&compare=never&filters=nonsense')).period).toBe('30d');
    expect(parseView(new URLSearchParams('compare=never')).compare).toBeUndefined();
    expect(parseView(new URLSearchParams('period=all')).period).toBe('all');
  });

  it('clicking a second value of a dimension replaces the first; other filters stay', () => {
    let view: View = { period: '7d', filters: [] };
    view = withFilter(view, { dimension: 'page', op: 'contains', values: ['docs'] });
    view = withFilter(view, { dimension: 'source', op: 'is', values: ['a'] });
    view = withFilter(view, { dimension: 'source', op: 'is', values: ['b'] });
    expect(formatFilters(view.filters)).toBe('page~=docs;source==b');
    expect(formatFilters(withoutFilter(view, 0).filters)).toBe('source==b');
    expect(apiParams(view, [{ dimension: 'event', op: 'is', values: ['Signup'] }])).toEqual({ period: '7d', from: undefined, to: undefined, compare: undefined, filters: 'page~=docs;source==b;event==Signup' });
  });
});

describe('dashboard CSV', () => {
  it('escapes cells exactly as the server does (formula injection, quoting)', () => {
    for (const cell of ['=1+1', '+x', '-y', '@z', '\tt', '\rr', 'a,b', 'say "hi"', '#tag', 'plain', 42, -5, null]) {
      expect(csvCell(cell)).toBe(serverCell(cell));
    }
    expect(toCsv(['page', 'visitors'], [['=cmd', 3], ['/a,b', 1]])).toBe(`page,visitors\r\n"'=cmd",3\r\n"/a,b",1\r\n`);
  });
});
