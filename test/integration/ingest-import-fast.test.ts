import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ImportLine } from '../../src/ingest/event-schema.js';
import { acceptImportLine } from '../../src/ingest/import-fast.js';

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
  fc.constantFrom({}, { a: 1 }, { a: { b: 1 } }, { a: [1] }, Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, i])), { ['k'.repeat(121)]: 1 }, { lcp: 1 }, { lcp: -1 }),
  fc.string(),
  fc.double(),
);
const FIELDS = ['timestamp', 'kind', 'visitorId', 'sessionId', 'url', 'referrer', 'name', 'props', 'amountCents', 'currency', 'durationMs', 'vitals', 'countryCode', 'region', 'city', 'browser', 'os', 'device'] as const;

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
    for (const line of lines) {
      expect(acceptImportLine(line), JSON.stringify(line)).not.toBeNull();
      expect(v.safeParse(ImportLine, line).success).toBe(true);
    }
  });

  it('never accepts a line the schema refuses, and outputs what the schema outputs', () => {
    fc.assert(
      fc.property(fc.subarray([...FIELDS]), fc.array(anyValue, { minLength: FIELDS.length, maxLength: FIELDS.length }), (changed, values) => {
        const line: Record<string, unknown> = { ...good };
        changed.forEach((field, i) => {
          if (values[i] === undefined) delete line[field];
          else line[field] = values[i];
        });
        const fast = acceptImportLine(line);
        const schema = v.safeParse(ImportLine, line);
        if (fast) {
          expect(schema.success, JSON.stringify(line)).toBe(true);
          if (schema.success) {
            for (const [k, val] of Object.entries(schema.output)) expect((fast.line as Record<string, unknown>)[k]).toEqual(val);
            expect(fast.url.href).toBe(new URL(schema.output.url).href);
            expect(fast.at).toBe(Date.parse(schema.output.timestamp));
          }
        }
      }),
      { numRuns: 20_000 },
    );
  });
});
