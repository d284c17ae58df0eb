import { END_EVENT_MS, EVENT_KINDS, isCurrency, MAX_NAME, MAX_PATH, MAX_PROPS, MIN_EVENT_MS, parseHttpUrl, pathOf, type EventInput, type ImportInput } from './event-schema.js';

/**
 * Hand-written acceptors for the common shapes of an import line and a tracker event, ~10×
 * cheaper than running the valibot schema a million times (or thousands of times a second).
 * They are deliberately one-sided: they answer only "certainly valid" (the input and its parsed
 * URL) or null for "let the schema decide", so every error message still comes from `ImportLine`
 * or `EventBody`. test/integration/ingest-fast-accept.test.ts checks that they never accept what
 * the schema refuses.
 */

const KINDS = new Set<string>(EVENT_KINDS);
// Stricter than the schema's ISO rule (UTC `Z` only, `T` separator): anything else goes to valibot.
const UTC_TIMESTAMP = /^\d{4}-(?:0[1-9]|1[0-2])-(?:[12]\d|0[1-9]|3[01])T(?:[01]\d|2[0-3])(?::[0-5]\d){2}(?:\.\d{1,9})?Z$/;
const COUNTRY = /^[A-Z]{2}$/;
const UINT32_MAX = 4_294_967_295;

const optString = (v: unknown, max: number) => v === undefined || (typeof v === 'string' && v.length <= max);
const idString = (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= 128;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function propsOk(props: unknown): boolean {
  if (props === undefined) return true;
  if (!isPlainObject(props)) return false;
  let n = 0;
  for (const key in props) {
    if (!Object.hasOwn(props, key)) return false;
    // The schema drops these keys; a copy could otherwise set a prototype. Let it decide.
    if (++n > MAX_PROPS || key.length > 120 || key === '__proto__' || key === 'constructor' || key === 'prototype') return false;
    const v = props[key];
    if (typeof v === 'string' ? v.length > 1000 : typeof v === 'number' ? !Number.isFinite(v) : typeof v !== 'boolean') return false;
  }
  return true;
}

/**
 * The rules of the fields tracker events and import lines share (`eventFields` and
 * `crossFieldRules` of the schema, vitals aside): the parsed URL when they certainly hold, null
 * when unsure.
 */
function sharedFieldsOk(o: Record<string, unknown>, parseUrl: (text: string) => URL | null): URL | null {
  const { kind, url, name, amountCents, currency, durationMs } = o;
  if (typeof kind !== 'string' || !KINDS.has(kind)) return null;
  if (typeof url !== 'string' || url.length > 4096) return null;
  const parsed = parseUrl(url);
  if (!parsed || pathOf(parsed).length > MAX_PATH) return null;
  if (o.referrer !== null && !optString(o.referrer, 4096)) return null;
  if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > MAX_NAME)) return null;
  if (amountCents !== undefined && !Number.isSafeInteger(amountCents)) return null;
  if (currency !== undefined && (typeof currency !== 'string' || !isCurrency(currency))) return null;
  if (durationMs !== undefined && (typeof durationMs !== 'number' || !(durationMs >= 0 && durationMs <= UINT32_MAX))) return null;
  if (!propsOk(o.props)) return null;
  if ((kind === 'custom' || kind === 'transaction') && name === undefined) return null;
  if ((amountCents === undefined) !== (currency === undefined)) return null;
  if (kind === 'transaction' && amountCents === undefined) return null;
  return parsed;
}

/** The line as the schema would output it, plus its parsed URL and time (epoch ms); null when unsure. `parseUrl` may be a memo of parseHttpUrl. */
export function acceptImportLine(line: unknown, parseUrl: (text: string) => URL | null = parseHttpUrl): { line: ImportInput; url: URL; at: number } | null {
  if (!isPlainObject(line)) return null;
  const { timestamp } = line;
  if (typeof timestamp !== 'string' || !UTC_TIMESTAMP.test(timestamp)) return null;
  const at = Date.parse(timestamp);
  if (!(at >= MIN_EVENT_MS && at < END_EVENT_MS)) return null;
  if (!idString(line.visitorId) || !idString(line.sessionId)) return null;
  if (line.vitals !== undefined) return null;
  if (line.countryCode !== undefined && (typeof line.countryCode !== 'string' || !COUNTRY.test(line.countryCode))) return null;
  for (const k of ['region', 'city', 'browser', 'os', 'device'] as const) if (!optString(line[k], 128)) return null;
  const url = sharedFieldsOk(line, parseUrl);
  return url ? { line: line as unknown as ImportInput, url, at } : null;
}

const VITALS = new Set(['lcp', 'inp', 'cls', 'fcp', 'ttfb']);

/** Core Web Vitals as the schema outputs them: only known metrics, each a finite number ≥ 0. */
function vitalsOk(vitals: unknown): boolean {
  if (vitals === undefined) return true;
  if (!isPlainObject(vitals)) return false;
  for (const key in vitals) {
    if (!Object.hasOwn(vitals, key) || !VITALS.has(key)) return false;
    const value = vitals[key];
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) return false;
  }
  return true;
}

/**
 * The tracker body (`POST /api/event`) as the schema would output it, plus its parsed URL; null
 * when unsure (the schema then decides and words the 400). One-sided like acceptImportLine:
 * test/integration/ingest-fast-accept.test.ts checks it never accepts what `EventBody` refuses.
 */
export function acceptEventBody(json: unknown): { event: EventInput; url: URL } | null {
  if (!isPlainObject(json)) return null;
  const { site, visitorId, screenWidth } = json;
  if (typeof site !== 'string' || site.length < 1 || site.length > 64) return null;
  if (visitorId !== undefined && !idString(visitorId)) return null;
  if (screenWidth !== undefined && !(Number.isInteger(screenWidth) && (screenWidth as number) >= 0 && (screenWidth as number) <= 65535)) return null;
  if (!vitalsOk(json.vitals)) return null;
  const url = sharedFieldsOk(json, parseHttpUrl);
  return url ? { event: json as unknown as EventInput, url } : null;
}
