import fc from 'fast-check';

/**
 * Hostile inputs for test/faults/openapi-fuzz.test.ts that need nothing from the app: strings of
 * any code units, path segments, JSON values, query values and headers.
 */

/**
 * Percent-encodes any JS string, lone surrogates included (as their WTF-8 bytes, which no
 * UTF-8 decoder accepts): `encodeURIComponent` throws on those.
 */
export function encodeAny(text: string): string {
  let out = '';
  for (const ch of text) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      const c = ch.charCodeAt(0);
      out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    }
  }
  return out;
}

/**
 * One UTF-16 code unit of any kind: any code point of the BMP, a surrogate half on its own (fast-check's
 * 'binary' unit never yields one), a control character. Pairs of them can still form astral characters.
 */
const wildUnit = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\u0001', '\u001f', '\u007f', '\ufffe', '\uffff', '\u202e', '\n', '"', '\\') },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
export const wildText = (maxLength: number, minLength = 0) => fc.string({ unit: wildUnit, minLength, maxLength });

/** A string of any code units: ASCII, any Unicode, lone surrogates, controls; short or long. */
export const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: wildText(40) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 300, maxLength: 5000 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\u0000', 'null', 'undefined', '__proto__', 'constructor', '-1', '0', '1e309', 'NaN', 'true', '[]', '{}', "'; DROP TABLE events; --", '{id:String}', '\ud800', '\udfff', 'x\ud800y', '😀', '\u202e', '%s%n') },
);

/** Path segments as a URL carries them (already encoded): hostile shapes and random text. */
export const hostileSegment = (real: string[]) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...real) },
    { weight: 1, arbitrary: fc.constantFrom(...real).map((r) => `${r}:members`) },
    { weight: 1, arbitrary: fc.constantFrom(...real).map((r) => `${r}:installed`) },
    { weight: 2, arbitrary: fc.constantFrom('x:members', '..', '.', '%2e%2e', '%2F', '%00', '%ED%A0%80', '%FF', '%C0%AF', '%', '%zz', 'a'.repeat(3000), 'xn--', 'localhost', '127.0.0.1', '[::1]', 'example.com.', '*', '%20', 'prj_', 'gol_x', '0') },
    { weight: 3, arbitrary: anyText.filter((s) => s.length > 0).map(encodeAny) },
  );

/** Any JSON value, any depth, sometimes large. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 0, -1, 1e308, -0, true, '', [], {}, 'a'.repeat(20_000), Array(2000).fill(1)) },
  { weight: 1, arbitrary: anyText },
);

/** Values the documented query parameters accept, by name (plus near misses). */
export const QUERY_VALUES: Record<string, string[]> = {
  period: ['24h', 'today', '7d', '30d', '90d', '6m', '12m', 'this_month', 'this_week', '1d', 'TODAY'],
  limit: ['1', '10', '100', '500', '0', '101', '-1', '1.5', '1e3', '9007199254740993'],
  filter: ['all', 'ai_answer', 'indexing', 'training', 'other', 'x'],
  response_type: ['code', 'token'],
  code_challenge_method: ['S256', 'plain'],
  code_challenge: ['E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 'short'],
  redirect_uri: ['https://client.example/cb', 'http://127.0.0.1:9/cb', 'javascript:x'],
  resource: ['http://localhost/mcp', 'https://other.example/mcp'],
  scope: ['read', 'write', 'read write', 'admin'],
  client_id: ['cli_x', ''],
};

/** Header values: printable Latin-1 (what a header can carry), hostile or plausible. */
const headerText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 200 }),
  fc.constantFrom('', ' ', 'a'.repeat(8000)),
);
/** Extra headers a request may carry: CSV answers, import batch ids, forwarded addresses, cookies. */
export const extraHeaders = fc.record(
  {
    Accept: fc.oneof(fc.constantFrom('text/csv', 'application/json', 'text/event-stream', 'application/json, text/event-stream', '*/*', 'text/html', 'text/csv;q=0.1, */*'), headerText),
    'X-Import-Batch-Id': fc.oneof(fc.constantFrom('batch-1', 'a'.repeat(128), 'a'.repeat(129)), headerText),
    'X-Forwarded-For': fc.oneof(fc.constantFrom('1.2.3.4', '::1', '10.0.0.1, 1.2.3.4', 'unknown', '999.1.1.1'), headerText),
    Cookie: fc.oneof(fc.constantFrom('sl_session=sls_x', 'sl_session=', 'a=b; c'), headerText),
    Origin: fc.oneof(fc.constantFrom('https://evil.example', 'null'), headerText),
    'Mcp-Protocol-Version': fc.constantFrom('2025-06-18', '2025-11-25', '1999-01-01', ''),
    'User-Agent': fc.oneof(fc.constantFrom('Googlebot/2.1 (+http://www.google.com/bot.html)', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0', ''), headerText),
  },
  { requiredKeys: [] },
);
