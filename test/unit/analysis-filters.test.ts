import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { Binder } from '../../src/analysis/binder.js';
import {
  FILTER_VALUE_MAX_LENGTH,
  FILTER_VALUES_MAX,
  FILTERS_MAX,
  FilterError,
  FiltersBody,
  FilterTuple,
  filterCondition,
  filtersToText,
  likePattern,
  parseFilters,
} from '../../src/analysis/filters.js';
import { EVENT_DIMENSIONS, FILTER_OPS, VISIT_DIMENSIONS, type Filter } from '../../src/analysis/question.js';
import { ApiError } from '../../src/errors.js';

const errorOf = (text: string): FilterError => {
  try {
    parseFilters(text);
  } catch (e) {
    expect(e).toBeInstanceOf(FilterError);
    return e as FilterError;
  }
  throw new Error(`parseFilters(${JSON.stringify(text)}) did not throw`);
};

describe('parseFilters', () => {
  it('reads nothing from empty text', () => {
    expect(parseFilters('')).toEqual([]);
  });

  it('reads the three operators and | alternatives', () => {
    expect(parseFilters('page==/a|/b;country!=DE;source~=goo|bing')).toEqual([
      { op: 'is', dimension: 'page', values: ['/a', '/b'] },
      { op: 'is_not', dimension: 'country', values: ['DE'] },
      { op: 'contains', dimension: 'source', values: ['goo', 'bing'] },
    ]);
  });

  it('reads custom property dimensions and allows a dimension twice', () => {
    expect(parseFilters('prop:plan==pro;prop:plan!=free')).toEqual([
      { op: 'is', dimension: 'prop:plan', values: ['pro'] },
      { op: 'is_not', dimension: 'prop:plan', values: ['free'] },
    ]);
  });

  it('takes the first operator: later ones belong to the value', () => {
    expect(parseFilters('page==a==b!=c~=d')).toEqual([{ op: 'is', dimension: 'page', values: ['a==b!=c~=d'] }]);
  });

  it('unescapes \\; \\| \\\\ in values', () => {
    expect(parseFilters('page==a\\|b|c\\;d|e\\\\f')).toEqual([{ op: 'is', dimension: 'page', values: ['a|b', 'c;d', 'e\\f'] }]);
    expect(parseFilters('event~=x\\\\|y')).toEqual([{ op: 'contains', dimension: 'event', values: ['x\\', 'y'] }]);
  });

  it('unescapes operator characters in a property key', () => {
    expect(parseFilters('prop:a\\=\\=b\\!==v')).toEqual([{ op: 'is', dimension: 'prop:a==b!', values: ['v'] }]);
    expect(parseFilters('prop:x\\~==v')).toEqual([{ op: 'is', dimension: 'prop:x~', values: ['v'] }]);
  });

  it('keeps spaces, quotes, unicode and * as written', () => {
    expect(parseFilters("page== /a b |/ü'\"*")).toEqual([{ op: 'is', dimension: 'page', values: [' /a b ', "/ü'\"*"] }]);
  });

  it('reads x== as the empty value for is / is_not', () => {
    expect(parseFilters('utmCampaign==')).toEqual([{ op: 'is', dimension: 'utmCampaign', values: [''] }]);
    expect(parseFilters('utmCampaign!=|x')).toEqual([{ op: 'is_not', dimension: 'utmCampaign', values: ['', 'x'] }]);
  });

  it('skips empty conditions', () => {
    expect(parseFilters('page==/a;')).toEqual([{ op: 'is', dimension: 'page', values: ['/a'] }]);
    expect(parseFilters(';;page==/a;;')).toHaveLength(1);
  });

  it('refuses an unknown dimension, naming the allowed ones', () => {
    const e = errorOf('x==1');
    expect(e.message).toBe(
      'filters: unknown dimension "x"; allowed: page, hostname, event, prop:<key>, source, channel, utmSource, utmMedium, utmCampaign, utmTerm, utmContent, entryPage, exitPage, country, region, city, browser, os, device',
    );
    expect(e.status).toBe(400);
    expect(e).toBeInstanceOf(ApiError);
    expect(errorOf('time:day==1').message).toMatch(/^filters: unknown dimension "time:day"/);
    expect(errorOf('Page==1').message).toMatch(/^filters: unknown dimension "Page"/);
  });

  it('refuses a property dimension without a key or with a key too long', () => {
    expect(errorOf('prop:==1').message).toBe('filters: "prop:": a property dimension is prop:<key> with a key of 1 to 300 characters');
    expect(errorOf(`prop:${'k'.repeat(301)}==1`).message).toMatch(/key of 1 to 300 characters/);
    expect(parseFilters(`prop:${'k'.repeat(300)}==1`)).toHaveLength(1);
  });

  it('refuses a condition without an operator', () => {
    expect(errorOf('x').message).toBe('filters: "x" must be <dimension>==value, <dimension>!=value or <dimension>~=text');
    expect(errorOf('page==/a;page=/b').message).toBe('filters: "page=/b" must be <dimension>==value, <dimension>!=value or <dimension>~=text');
    expect(errorOf('page\\==/a').message).toMatch(/must be <dimension>==value/);
  });

  it('cuts long text in messages short', () => {
    expect(errorOf('x'.repeat(5000)).message.length).toBeLessThan(200);
  });

  it('refuses empty contains text', () => {
    expect(errorOf('page~=').message).toBe('filters: contains (~=) needs non-empty text in every alternative ("page")');
    expect(errorOf('page~=a|').message).toMatch(/contains \(~=\) needs non-empty text/);
  });

  it('refuses a bad or dangling escape', () => {
    expect(errorOf('page==a\\b').message).toBe('filters: \\ must be followed by ; | \\ = ! or ~');
    expect(errorOf('page==a\\').message).toBe('filters: \\ must be followed by ; | \\ = ! or ~');
  });

  it('holds the limits: conditions, values per condition, value length', () => {
    const conditions = (n: number) => Array.from({ length: n }, (_, i) => `page==/${i}`).join(';');
    expect(parseFilters(conditions(FILTERS_MAX))).toHaveLength(FILTERS_MAX);
    expect(errorOf(conditions(FILTERS_MAX + 1)).message).toBe('filters: at most 20 conditions');

    const values = (n: number) => `page==${Array.from({ length: n }, (_, i) => `/${i}`).join('|')}`;
    expect(parseFilters(values(FILTER_VALUES_MAX))[0]!.values).toHaveLength(FILTER_VALUES_MAX);
    expect(errorOf(values(FILTER_VALUES_MAX + 1)).message).toBe('filters: at most 100 values in one condition ("page")');

    expect(parseFilters(`page==${'a'.repeat(FILTER_VALUE_MAX_LENGTH)}`)[0]!.values[0]).toHaveLength(FILTER_VALUE_MAX_LENGTH);
    expect(errorOf(`page==${'a'.repeat(FILTER_VALUE_MAX_LENGTH + 1)}`).message).toBe('filters: a value may have at most 2000 characters ("page")');
  });
});

const dimensionArb = fc.oneof(
  fc.constantFrom(...EVENT_DIMENSIONS, ...VISIT_DIMENSIONS),
  fc.string({ minLength: 1, maxLength: 20, unit: fc.constantFrom('a', '=', '!', '~', ';', '|', '\\', ':', ' ', 'é') }).map((k) => `prop:${k}`),
);
const valueArb = fc.oneof(fc.string({ maxLength: 12, unit: fc.constantFrom('a', 'Z', '=', '!', '~', ';', '|', '\\', '*', '%', ' ', '😀') }), fc.string({ maxLength: 8 }));
const filterArb: fc.Arbitrary<Filter> = fc
  .record({ op: fc.constantFrom(...FILTER_OPS), dimension: dimensionArb, values: fc.array(valueArb, { minLength: 1, maxLength: 5 }) })
  .map((f) => (f.op === 'contains' ? { ...f, values: f.values.map((x) => x || 'x') } : f) as Filter);

describe('filtersToText', () => {
  it('writes the text parseFilters reads back as the same filters', () => {
    fc.assert(
      fc.property(fc.array(filterArb, { maxLength: FILTERS_MAX }), (filters) => {
        expect(parseFilters(filtersToText(filters))).toEqual(filters);
      }),
      { numRuns: 500 },
    );
  });

  it('escapes only what needs it', () => {
    expect(filtersToText([{ op: 'is', dimension: 'page', values: ['/a|b', 'c;d', 'e\\f', 'x==y'] }])).toBe('page==/a\\|b|c\\;d|e\\\\f|x==y');
    expect(filtersToText([{ op: 'contains', dimension: 'prop:a=b', values: ['q'] }, { op: 'is_not', dimension: 'country', values: ['DE'] }])).toBe(
      'prop:a\\=b~=q;country!=DE',
    );
  });
});

describe('FilterTuple / FiltersBody', () => {
  it('turns tuples into filters', () => {
    expect(v.parse(FiltersBody, [['is', 'page', ['/a', '/b*']], ['contains', 'prop:plan', ['Pro']]])).toEqual([
      { op: 'is', dimension: 'page', values: ['/a', '/b*'] },
      { op: 'contains', dimension: 'prop:plan', values: ['Pro'] },
    ]);
  });

  const firstMessage = (schema: v.GenericSchema, input: unknown) => {
    const r = v.safeParse(schema, input);
    expect(r.success).toBe(false);
    return r.issues![0].message;
  };

  it.each([
    [['equals', 'page', ['/a']], 'filters: an operator is one of is, is_not, contains'],
    [['is', 'nope', ['/a']], /^filters: unknown dimension "nope"; allowed: page, hostname/],
    [['is', 'page', []], 'filters: a condition needs at least one value'],
    [['is', 'page', [1]], /./],
    [['contains', 'page', ['a', '']], 'filters: contains (~=) needs non-empty text in every alternative ("page")'],
    [['is', 'page', Array.from({ length: FILTER_VALUES_MAX + 1 }, (_, i) => `/${i}`)], 'filters: at most 100 values in one condition'],
    [['is', 'page', ['a'.repeat(FILTER_VALUE_MAX_LENGTH + 1)]], 'filters: a value may have at most 2000 characters'],
    [['is', 'page', ['/a'], 'extra'], /./],
    [['is', 'page'], /./],
  ])('refuses %j', (tuple, message) => {
    const got = firstMessage(FilterTuple, tuple);
    if (typeof message === 'string') expect(got).toBe(message);
    else expect(got).toMatch(message);
  });

  it('allows the empty value for is, and at most 20 conditions', () => {
    expect(v.parse(FilterTuple, ['is', 'utmCampaign', ['']])).toEqual({ op: 'is', dimension: 'utmCampaign', values: [''] });
    const tuple = ['is', 'page', ['/']];
    expect(v.parse(FiltersBody, Array(FILTERS_MAX).fill(tuple))).toHaveLength(FILTERS_MAX);
    expect(firstMessage(FiltersBody, Array(FILTERS_MAX + 1).fill(tuple))).toBe('filters: at most 20 conditions');
  });

  it('gives the filters parseFilters gives for the same conditions', () => {
    fc.assert(
      fc.property(fc.array(filterArb, { maxLength: FILTERS_MAX }), (filters) => {
        expect(v.parse(FiltersBody, filters.map((f) => [f.op, f.dimension, f.values]))).toEqual(parseFilters(filtersToText(filters)));
      }),
      { numRuns: 200 },
    );
  });
});

describe('filterCondition', () => {
  const sql = (f: Filter, target = 'path') => {
    const binder = new Binder();
    return { sql: filterCondition(f, target, binder), params: binder.params };
  };

  it('binds is / is_not values as one array', () => {
    expect(sql({ op: 'is', dimension: 'country', values: ['DE', "F'R"] }, 'v_country')).toEqual({ sql: 'v_country IN {a0:Array(String)}', params: { a0: ['DE', "F'R"] } });
    expect(sql({ op: 'is_not', dimension: 'country', values: ['DE'] }, 'v_country')).toEqual({ sql: 'NOT (v_country IN {a0:Array(String)})', params: { a0: ['DE'] } });
  });

  it('binds contains values for a case-insensitive search', () => {
    expect(sql({ op: 'contains', dimension: 'page', values: ['Blog', '*'] })).toEqual({ sql: 'multiSearchAnyCaseInsensitiveUTF8(path, {a0:Array(String)})', params: { a0: ['Blog', '*'] } });
  });

  it('turns page values with * into LIKE patterns, OR-ed with the exact ones', () => {
    expect(sql({ op: 'is', dimension: 'page', values: ['/a', '/b/*', '/%_\\*'] })).toEqual({
      sql: '(path IN {a0:Array(String)} OR path LIKE {a1:String} OR path LIKE {a2:String})',
      params: { a0: ['/a'], a1: '/b/%', a2: '/\\%\\_\\\\%' },
    });
    expect(sql({ op: 'is_not', dimension: 'exitPage', values: ['*x'] }, 'v_exitPage')).toEqual({ sql: 'NOT (v_exitPage LIKE {a0:String})', params: { a0: '%x' } });
  });

  it('keeps * literal outside page dimensions', () => {
    expect(sql({ op: 'is', dimension: 'event', values: ['a*'] }, 'event_name')).toEqual({ sql: 'event_name IN {a0:Array(String)}', params: { a0: ['a*'] } });
  });

  it('writes no value into the SQL text', () => {
    fc.assert(
      fc.property(filterArb, (f) => {
        const { sql: text } = sql(f);
        expect(text).toMatch(/^[A-Za-z0-9_ (){}:,]+$/);
      }),
    );
  });

  it('escapes LIKE metacharacters before * becomes %', () => {
    expect(likePattern('100%_off\\*')).toBe('100\\%\\_off\\\\%');
  });
});
