import { END_EVENT_MS, EVENT_KINDS, isCurrency, MAX_NAME, MAX_PATH, MAX_PROPS, MIN_EVENT_MS, parseHttpUrl, pathOf, type ImportInput } from './event-schema.js';

/**
 * A hand-written acceptor for the common shape of an import line, ~10× cheaper than running the
 * valibot schema a million times. It is deliberately one-sided: it answers only "certainly valid"
 * (the line and its parsed URL) or null for "let the schema decide", so every error message still
 * comes from `ImportLine`. test/integration/ingest-import-fast.test.ts checks that it never accepts
 * what the schema refuses.
 */

const KINDS = new Set<string>(EVENT_KINDS);
// Stricter than the schema's ISO rule (UTC `Z` only, `T` separator): anything else goes to valibot.
const UTC_TIMESTAMP = /^\d{4}-(?:0[1-9]|1[0-2])-(?:[12]\d|0[1-9]|3[01])T(?:[01]\d|2[0-3])(?::[0-5]\d){2}(?:\.\d{1,9})?Z$/;
const COUNTRY = /^[A-Z]{2}$/;
const UINT32_MAX = 4_294_967_295;

const optString = (v: unknown, max: number) => v === undefined || (typeof v === 'string' && v.length <= max);
const idString = (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= 128;

function propsOk(props: unknown): boolean {
  if (props === undefined) return true;
  if (typeof props !== 'object' || props === null || Array.isArray(props)) return false;
  let n = 0;
  for (const key in props) {
    if (!Object.hasOwn(props, key)) return false;
    // The schema drops these keys; a copy could otherwise set a prototype. Let it decide.
    if (++n > MAX_PROPS || key.length > 120 || key === '__proto__' || key === 'constructor' || key === 'prototype') return false;
    const v = (props as Record<string, unknown>)[key];
    if (typeof v === 'string' ? v.length > 1000 : typeof v === 'number' ? !Number.isFinite(v) : typeof v !== 'boolean') return false;
  }
  return Object.getPrototypeOf(props) === Object.prototype;
}

/** The line as the schema would output it, plus its parsed URL and time (epoch ms); null when unsure. `parseUrl` may be a memo of parseHttpUrl. */
export function acceptImportLine(json: unknown, parseUrl: (text: string) => URL | null = parseHttpUrl): { line: ImportInput; url: URL; at: number } | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const o = json as Record<string, unknown>;
  const { timestamp, kind, url, name, amountCents, currency, durationMs } = o;
  if (typeof timestamp !== 'string' || !UTC_TIMESTAMP.test(timestamp)) return null;
  const at = Date.parse(timestamp);
  if (!(at >= MIN_EVENT_MS && at < END_EVENT_MS)) return null;
  if (typeof kind !== 'string' || !KINDS.has(kind)) return null;
  if (!idString(o.visitorId) || !idString(o.sessionId)) return null;
  if (typeof url !== 'string' || url.length > 4096) return null;
  const parsed = parseUrl(url);
  if (!parsed || pathOf(parsed).length > MAX_PATH) return null;
  if (o.referrer !== null && !optString(o.referrer, 4096)) return null;
  if (name !== undefined && (typeof name !== 'string' || name.length < 1 || name.length > MAX_NAME)) return null;
  if (amountCents !== undefined && !Number.isSafeInteger(amountCents)) return null;
  if (currency !== undefined && (typeof currency !== 'string' || !isCurrency(currency))) return null;
  if (durationMs !== undefined && (typeof durationMs !== 'number' || !(durationMs >= 0 && durationMs <= UINT32_MAX))) return null;
  if (o.vitals !== undefined || !propsOk(o.props)) return null;
  if (o.countryCode !== undefined && (typeof o.countryCode !== 'string' || !COUNTRY.test(o.countryCode))) return null;
  for (const k of ['region', 'city', 'browser', 'os', 'device'] as const) if (!optString(o[k], 128)) return null;
  if ((kind === 'custom' || kind === 'transaction') && name === undefined) return null;
  if ((amountCents === undefined) !== (currency === undefined)) return null;
  if (kind === 'transaction' && amountCents === undefined) return null;
  return { line: o as unknown as ImportInput, url: parsed, at };
}
