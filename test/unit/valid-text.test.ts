import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { botHitRow, eventRow } from '../../src/ingest/pipeline.js';
import { isValidText, validMapText, validRowText, validText } from '../../src/ingest/valid-text.js';

const C0 = /[\u0000-\u001f]/;

/** Any UTF-16 text: lone surrogates and controls included, mixed with ordinary characters and pairs. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.oneof(fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\u0000', '\u001f', '\t', '\n', '🚀', 'é', 'a'), fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u))) }),
);
/** Text with no lone surrogate and no C0 control (emoji and other pairs included). */
const cleanText = fc.string({ unit: 'binary' }).map((s) => s.toWellFormed().replace(/[\u0000-\u001f]/g, ''));

describe('validText', () => {
  it('always answers well-formed text without C0 controls', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        const out = validText(s);
        expect(out.isWellFormed()).toBe(true);
        expect(C0.test(out)).toBe(false);
        // Encodes to UTF-8 and back unchanged: nothing was replaced on the way to bytes (a leading
        // U+FEFF is text here, not a byte order mark for the decoder to drop).
        expect(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(out))).toBe(out);
      }),
      { numRuns: 3000 },
    );
  });

  it('returns clean text unchanged, and is idempotent', () => {
    fc.assert(
      fc.property(cleanText, (s) => {
        expect(isValidText(s)).toBe(true);
        expect(validText(s)).toBe(s);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(anyText, (s) => {
        expect(validText(validText(s))).toBe(validText(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps every other character: only lone surrogates are replaced and only C0 controls dropped', () => {
    fc.assert(
      fc.property(anyText, (s) => {
        // The reference: code point by code point.
        let expected = '';
        for (const ch of s) {
          const cp = ch.codePointAt(0)!;
          if (cp < 0x20) continue;
          expected += cp >= 0xd800 && cp <= 0xdfff ? '\ufffd' : ch;
        }
        expect(validText(s)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('handles the values of the hostile requests', () => {
    expect(validText('x\ud800')).toBe('x\ufffd');
    expect(validText('\udc00y')).toBe('\ufffdy');
    expect(validText('\udc00\ud800')).toBe('\ufffd\ufffd');
    expect(validText('a\u0000b\u0001c\u001fd\te\nf\rg')).toBe('abcdefg');
    expect(validText('\u007f\u0080 kept')).toBe('\u007f\u0080 kept');
    expect(validText('Signup 🚀')).toBe('Signup 🚀');
    expect(validText('\ufeff')).toBe('\ufeff');
    expect(validText('')).toBe('');
  });
});

describe('validRowText / validMapText', () => {
  it('makes every string column and every props key and value valid', () => {
    // As JSON gives it: `__proto__` an own key of props.
    const props = JSON.parse('{"k\\u0000": "v\\udfff", "n": "1", "__proto__": "own key"}') as Record<string, string>;
    const row = { project_id: 'p', path: '/x\ud800', kind: 'custom', props, asn: 5, lcp: undefined };
    const out = validRowText(row);
    expect(out).toEqual({ project_id: 'p', path: '/x\ufffd', kind: 'custom', props: { k: 'v\ufffd', n: '1', ['__proto__']: 'own key' }, asn: 5, lcp: undefined });
    expect(Object.keys(out.props as object)).toEqual(['k', 'n', '__proto__']);
    expect(row.path).toBe('/x\ud800');
  });

  it('returns the same objects when nothing needs a change', () => {
    const props = { plan: 'pro', emoji: '🚀' };
    const row = { path: '/a', props, n: 3 };
    expect(validRowText(row)).toBe(row);
    expect(validMapText(props)).toBe(props);
  });

  it('leaves every row valid, whatever its strings', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(anyText, fc.integer(), fc.dictionary(anyText, anyText))), (row) => {
        const out = validRowText(row);
        for (const value of Object.values(out)) {
          const texts = typeof value === 'string' ? [value] : typeof value === 'object' ? Object.entries(value as object).flat() : [];
          for (const t of texts) expect(typeof t !== 'string' || isValidText(t)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});

/** Every string in a row, props keys and values included. */
const textsOf = (row: Record<string, unknown>): string[] =>
  Object.values(row).flatMap((v) => (typeof v === 'string' ? [v] : v && typeof v === 'object' && !Array.isArray(v) ? Object.entries(v).flat().filter((t) => typeof t === 'string') : []));

describe('the row builders every ingest path goes through', () => {
  it('eventRow stores only valid text, whatever string fields an event or its enrichment brings', () => {
    fc.assert(
      fc.property(
        fc.record({
          referrer: anyText,
          name: anyText,
          props: fc.dictionary(anyText, fc.oneof(anyText, fc.integer(), fc.boolean()), { maxKeys: 4 }),
          utm: anyText,
          path: anyText,
          dims: fc.array(anyText, { minLength: 7, maxLength: 7 }),
          countryCode: fc.constantFrom('', 'DE', 'x\ud800', '\u0000'),
        }),
        ({ referrer, name, props, utm, path, dims, countryCode }) => {
          const url = new URL('https://example.com/');
          url.pathname = path;
          url.hash = path;
          for (const key of ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content']) url.searchParams.set(key, utm);
          const [region, city, device, browser, browserVersion, os, osVersion] = dims as [string, string, string, string, string, string, string];
          const row = eventRow({ id: 'p', domain: 'example.com' }, { kind: 'custom', url, referrer, name, props }, 1_700_000_000_000, {
            visitorId: '1',
            sessionId: '2',
            countryCode,
            region,
            city,
            device,
            browser,
            browserVersion,
            os,
            osVersion,
          });
          for (const t of textsOf(row)) expect(isValidText(t), JSON.stringify(t)).toBe(true);
          expect(textsOf(row).length).toBeGreaterThan(5);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('botHitRow stores only valid text, also after cutting a user agent inside a surrogate pair', () => {
    fc.assert(
      fc.property(anyText, anyText, (path, userAgent) => {
        const row = botHitRow('p', { slug: 'googlebot', name: 'Googlebot', category: 'indexing' }, { verified: false, path, userAgent, now: 0 });
        for (const t of textsOf(row)) expect(isValidText(t), JSON.stringify(t)).toBe(true);
      }),
      { numRuns: 1000 },
    );
    const cut = botHitRow('p', { slug: 's', name: 'n', category: 'other' }, { verified: false, path: '/', userAgent: `${'a'.repeat(1023)}🚀`, now: 0 });
    expect(cut.user_agent).toBe(`${'a'.repeat(1023)}\ufffd`);
  });
});
