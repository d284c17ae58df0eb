import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { EventBody, ImportLine } from '../../src/ingest/event-schema.js';
import { acceptEventBody, acceptImportLine } from '../../src/ingest/fast-accept.js';

const good = {
  timestamp: '2024-05-01T12:30:00.123Z',
  kind: 'pageview',
  visitorId: 'v1',
  sessionId: 's1',
  url: 'https://example.com/a?utm_source=x#/route',
  referrer: 'https://google.com/',
  countryCode: 'DE',
  region: 'Berlin',
  city: 'Berlin',
  browser: 'Firefox',
  os: 'Linux',
  device: 'Desktop',
};

// Values that sit on and around every rule of the schema.
const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constantFrom('', 'x', 'pageview', 'leave', 'custom', 'transaction', 'vitals', 'click', 'EUR', 'usd', 'XYZ', 'DE', 'de', 'D', 'https://example.com/', 'data:text/plain,x', 'javascript:alert(1)', '/rel', `https://e.com/${'p'.repeat(2048)}`, `https://e.com/${'p'.repeat(2047)}`, 'n'.repeat(120), 'n'.repeat(121), 'i'.repeat(128), 'i'.repeat(129)),
  fc.constantFrom('2024-05-01T12:00:00Z', '1899-12-31T23:59:59.999Z', '1900-01-01T00:00:00Z', '2299-12-31T23:59:59.999Z', '2300-01-01T00:00:00Z', '2024-05-01 12:00:00Z', '2024-05-01T12:00:00+02:00', '2024-13-01T12:00:00Z', '2024-02-31T12:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01', 'yesterday'),
  fc.constantFrom(0, -1, 1.5, 100, 2 ** 53, 4_294_967_295, 4_294_967_296, Number.NaN, Number.POSITIVE_INFINITY),
  fc.boolean(),
  fc.constantFrom({}, { a: 1 }, { a: { b: 1 } }, { a: [1] }, Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, i])), { ['k'.repeat(121)]: 1 }, { lcp: 1 }, { lcp: -1 }, { cls: 0, ttfb: 80.5 }, { lcp: 1200, inp: 40, cls: 0.05, fcp: 900, ttfb: 60 }, { lcp: null }, { lcp: '1' }, { fid: 1 }, { lcp: Number.POSITIVE_INFINITY }, [1]),
  fc.constantFrom(0, 390, 1440, 65535, 65536, 1.5, -1),
  fc.string(),
  fc.double(),
);
const FIELDS = ['timestamp', 'kind', 'visitorId', 'sessionId', 'url', 'referrer', 'name', 'props', 'amountCents', 'currency', 'durationMs', 'vitals', 'countryCode', 'region', 'city', 'browser', 'os', 'device'] as const;

/** Each input passes the acceptor, and the schema agrees it is valid. */
function expectFastAndValid(inputs: readonly unknown[], accept: (input: unknown) => unknown, schema: v.GenericSchema) {
  for (const input of inputs) {
    expect(accept(input), JSON.stringify(input)).not.toBeNull();
    expect(v.safeParse(schema, input).success).toBe(true);
  }
}

/**
 * Changes a random subset of `fields` of `base` to generated values, 20 000 times, and checks the
 * acceptor is one-sided: whatever it accepts, the schema accepts too, with the same output.
 */
function checkOneSided<T extends Record<string, unknown>>(
  base: Record<string, unknown>,
  fields: readonly string[],
  schema: v.GenericSchema<unknown, T>,
  accept: (input: unknown) => { value: Record<string, unknown>; url: URL } | null,
  alsoCheck: (input: Record<string, unknown>, output: T) => void = () => {},
) {
  fc.assert(
    fc.property(fc.subarray([...fields]), fc.array(anyValue, { minLength: fields.length, maxLength: fields.length }), (changed, values) => {
      const input: Record<string, unknown> = { ...base };
      changed.forEach((field, i) => {
        if (values[i] === undefined) delete input[field];
        else input[field] = values[i];
      });
      const fast = accept(input);
      const parsed = v.safeParse(schema, input);
      if (!fast) return;
      expect(parsed.success, JSON.stringify(input)).toBe(true);
      if (!parsed.success) return;
      for (const [k, val] of Object.entries(parsed.output)) expect(fast.value[k]).toEqual(val);
      expect(fast.url.href).toBe(new URL(String(parsed.output.url)).href);
      alsoCheck(input, parsed.output);
    }),
    { numRuns: 20_000 },
  );
}

describe('import fast path', () => {
  it('accepts the common valid shapes without the schema', () => {
    const lines = [
      good,
      { ...good, referrer: undefined, region: undefined },
      { ...good, referrer: null },
      { ...good, kind: 'leave', durationMs: 1500 },
      { ...good, kind: 'custom', name: 'Signup', props: { plan: 'pro', seats: 3, trial: true } },
      { ...good, kind: 'transaction', name: 'Order', amountCents: 1999, currency: 'EUR' },
    ];
    expectFastAndValid(lines, acceptImportLine, ImportLine);
  });

  it('never accepts a line the schema refuses, and outputs what the schema outputs', () => {
    checkOneSided(good, FIELDS, ImportLine, (input) => {
      const fast = acceptImportLine(input);
      return fast && { value: fast.line, url: fast.url };
    }, (input, output) => expect(acceptImportLine(input)!.at).toBe(Date.parse(output.timestamp)));
  });
});

const goodEvent = { site: 'prj_abc', kind: 'pageview', url: 'https://example.com/a?utm_source=x#/route', referrer: 'https://google.com/', screenWidth: 1440 };
const EVENT_FIELDS = ['site', 'kind', 'url', 'referrer', 'name', 'props', 'amountCents', 'currency', 'durationMs', 'vitals', 'visitorId', 'screenWidth'] as const;

describe('tracker event fast path', () => {
  it('accepts the tracker\'s usual bodies without the schema', () => {
    const bodies = [
      goodEvent,
      { site: 'prj_abc', kind: 'pageview', url: 'https://example.com/' },
      { ...goodEvent, referrer: null, visitorId: 'first-party-id' },
      { ...goodEvent, kind: 'leave', durationMs: 15_000 },
      { ...goodEvent, kind: 'vitals', vitals: { lcp: 1200, inp: 40, cls: 0, fcp: 900, ttfb: 60 } },
      { ...goodEvent, kind: 'custom', name: 'Signup', props: { plan: 'pro', seats: 3, trial: true } },
      { ...goodEvent, kind: 'transaction', name: 'Order', amountCents: 1999, currency: 'EUR' },
    ];
    expectFastAndValid(bodies, acceptEventBody, EventBody);
  });

  it('never accepts a body the schema refuses, and outputs what the schema outputs', () => {
    checkOneSided(goodEvent, EVENT_FIELDS, EventBody, (input) => {
      const fast = acceptEventBody(input);
      return fast && { value: fast.event, url: fast.url };
    });
  });


  it('leaves non-objects and unusual shapes to the schema', () => {
    for (const json of [null, [], 'x', 1, Object.create({ site: 'prj_abc' }), { ...goodEvent, vitals: { lcp: 1, fid: 2 } }, { ...goodEvent, screenWidth: 1.5 }]) {
      expect(acceptEventBody(json)).toBeNull();
    }
  });
});
