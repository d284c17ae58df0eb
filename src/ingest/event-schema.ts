import * as v from 'valibot';

/** Event kinds the pipeline records (the API contract plus `vitals`). */
export const EVENT_KINDS = ['pageview', 'leave', 'custom', 'transaction', 'vitals'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const MAX_PATH = 2048;
export const MAX_PROPS = 30;
export const MAX_NAME = 120;
const MAX_URL = 4096;
const MAX_PROP_KEY = 120;
const MAX_PROP_VALUE = 1000;
const UINT32_MAX = 4_294_967_295;

/** ISO 4217 codes this runtime knows; a currency must be three capitals and one of these. */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
export const isCurrency = (code: string): boolean => /^[A-Z]{3}$/.test(code) && CURRENCIES.has(code);

/**
 * The page path an event is counted under: the URL path, plus the fragment when the tracker sent
 * one (it keeps `#…` only for sites in hash-routing mode, so an anchor never splits a page).
 */
export function pathOf(url: URL): string {
  return url.hash.length > 1 ? url.pathname + url.hash : url.pathname;
}

/** Parses an absolute http(s) URL; null for anything else (`data:`, `javascript:`, relative). */
export function parseHttpUrl(text: string): URL | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

const PageUrl = v.pipe(
  v.string('url must be a string'),
  v.maxLength(MAX_URL, `url must be at most ${MAX_URL} characters`),
  // Both rules from one parse (URL parsing is the costly part of validating an event).
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const url = parseHttpUrl(dataset.value);
    if (!url) addIssue({ message: 'url must be an absolute http(s) URL' });
    else if (pathOf(url).length > MAX_PATH) addIssue({ message: `path must be at most ${MAX_PATH} characters` });
  }),
);

const nonNegative = (field: string) =>
  v.pipe(v.number(`${field} must be a number`), v.finite(`${field} must be a finite number`), v.minValue(0, `${field} must be ≥ 0`));

const PropValue = v.union(
  [v.pipe(v.string(), v.maxLength(MAX_PROP_VALUE, `props values must be at most ${MAX_PROP_VALUE} characters`)), v.pipe(v.number(), v.finite()), v.boolean()],
  'props values must be strings, numbers or booleans',
);

const Props = v.pipe(
  v.record(v.pipe(v.string(), v.maxLength(MAX_PROP_KEY, `props keys must be at most ${MAX_PROP_KEY} characters`)), PropValue, 'props must be a flat object'),
  v.check((p) => Object.keys(p).length <= MAX_PROPS, `props may hold at most ${MAX_PROPS} entries`),
);

const Vitals = v.object(
  {
    lcp: v.optional(nonNegative('vitals.lcp')),
    inp: v.optional(nonNegative('vitals.inp')),
    cls: v.optional(nonNegative('vitals.cls')),
    fcp: v.optional(nonNegative('vitals.fcp')),
    ttfb: v.optional(nonNegative('vitals.ttfb')),
  },
  'vitals must be an object',
);

const Referrer = v.nullish(v.pipe(v.string('referrer must be a string'), v.maxLength(MAX_URL, `referrer must be at most ${MAX_URL} characters`)));

/** Fields an event carries, shared by the tracker body and import lines. */
const eventFields = {
  kind: v.picklist(EVENT_KINDS, `kind must be one of ${EVENT_KINDS.join(', ')}`),
  url: PageUrl,
  referrer: Referrer,
  name: v.optional(
    v.pipe(v.string('name must be a string'), v.minLength(1, 'name must not be empty'), v.maxLength(MAX_NAME, `name must be at most ${MAX_NAME} characters`)),
  ),
  props: v.optional(Props),
  amountCents: v.optional(v.pipe(v.number('amountCents must be a number'), v.safeInteger('amountCents must be a whole number of minor units'))),
  currency: v.optional(v.pipe(v.string('currency must be a string'), v.check(isCurrency, 'currency must be an ISO 4217 code such as USD'))),
  durationMs: v.optional(v.pipe(nonNegative('durationMs'), v.maxValue(UINT32_MAX, 'durationMs is too large'))),
  vitals: v.optional(Vitals),
} as const;

/** Rules that tie fields together; the same for the tracker and import. */
const crossFieldRules = <T extends { kind: EventKind; name?: string; amountCents?: number; currency?: string }>() =>
  [
    v.check<T, string>((e) => !(e.kind === 'custom' || e.kind === 'transaction') || e.name !== undefined, 'name is required for custom and transaction events'),
    v.check<T, string>((e) => e.amountCents === undefined || e.currency !== undefined, 'currency is required with amountCents'),
    v.check<T, string>((e) => e.currency === undefined || e.amountCents !== undefined, 'amountCents is required with currency'),
    v.check<T, string>((e) => e.kind !== 'transaction' || e.amountCents !== undefined, 'amountCents and currency are required for transaction events'),
  ] as const;

/** A persisted first-party visitor id (tracker `data-persist`) or an imported one. */
const VisitorKey = (field: string) =>
  v.pipe(v.string(`${field} must be a string`), v.minLength(1, `${field} must not be empty`), v.maxLength(128, `${field} must be at most 128 characters`));

const EventObject = v.object(
  {
    site: v.pipe(v.string('site must be a string'), v.minLength(1, 'site is required'), v.maxLength(64, 'site is too long')),
    ...eventFields,
    visitorId: v.optional(VisitorKey('visitorId')),
    screenWidth: v.optional(v.pipe(v.number('screenWidth must be a number'), v.integer('screenWidth must be an integer'), v.minValue(0, 'screenWidth must be ≥ 0'), v.maxValue(65535, 'screenWidth is too large'))),
  },
  'body must be a JSON object',
);

/** Body of `POST /api/event`. */
export const EventBody = v.pipe(EventObject, ...crossFieldRules<v.InferOutput<typeof EventObject>>());
export type EventInput = v.InferOutput<typeof EventBody>;

/** The span ClickHouse's DateTime64 holds (1900-01-01 up to the end of 2299, UTC), as epoch ms. */
export const MIN_EVENT_MS = Date.UTC(1900, 0, 1);
export const END_EVENT_MS = Date.UTC(2300, 0, 1);

const IsoTimestamp = v.pipe(
  v.string('timestamp must be an ISO 8601 string'),
  v.isoTimestamp('timestamp must be an ISO 8601 date-time with a zone, e.g. 2024-05-01T12:00:00Z'),
  v.check((s) => !Number.isNaN(Date.parse(s)), 'timestamp is not a valid date'),
  v.check((s) => Date.parse(s) >= MIN_EVENT_MS && Date.parse(s) < END_EVENT_MS, 'timestamp must be between 1900 and 2299'),
);

const Dimension = (field: string) => v.optional(v.pipe(v.string(`${field} must be a string`), v.maxLength(128, `${field} must be at most 128 characters`)));

const ImportObject = v.object(
  {
    timestamp: IsoTimestamp,
    ...eventFields,
    visitorId: VisitorKey('visitorId'),
    sessionId: VisitorKey('sessionId'),
    countryCode: v.optional(v.pipe(v.string('countryCode must be a string'), v.regex(/^[A-Z]{2}$/, 'countryCode must be an ISO 3166 alpha-2 code such as US'))),
    region: Dimension('region'),
    city: Dimension('city'),
    browser: Dimension('browser'),
    os: Dimension('os'),
    device: Dimension('device'),
  },
  'each line must be a JSON object',
);

/** One line of the NDJSON import. */
export const ImportLine = v.pipe(ImportObject, ...crossFieldRules<v.InferOutput<typeof ImportObject>>());
export type ImportInput = v.InferOutput<typeof ImportLine>;

/** One server-side request log entry of `POST …/hits`. */
export const HitItem = v.object(
  {
    ts: v.optional(IsoTimestamp),
    path: v.pipe(
      v.string('path must be a string'),
      v.startsWith('/', 'path must start with /'),
      v.maxLength(MAX_PATH, `path must be at most ${MAX_PATH} characters`),
    ),
    userAgent: v.pipe(v.string('userAgent must be a string'), v.maxLength(1024, 'userAgent must be at most 1024 characters')),
    ip: v.pipe(v.string('ip must be a string'), v.ip('ip must be an IPv4 or IPv6 address')),
    status: v.optional(v.pipe(v.number('status must be a number'), v.integer('status must be an integer'), v.minValue(100, 'status must be 100–599'), v.maxValue(599, 'status must be 100–599'))),
    referrer: Referrer,
  },
  'each hit must be an object',
);
export type HitInput = v.InferOutput<typeof HitItem>;

export const MAX_HITS = 1000;

/** Body of `POST …/hits`: the array shape only; items are checked one by one so good ones are kept. */
export const HitsBody = v.pipe(
  v.array(v.unknown(), 'body must be a JSON array of hits'),
  v.minLength(1, 'body must hold at least one hit'),
  v.maxLength(MAX_HITS, `at most ${MAX_HITS} hits per request`),
);

/** `path: message` of the first issue, so a 400 names the field. */
export function firstIssue(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  const path = v.getDotPath(issue);
  // valibot takes arrays for objects and words a missing key with the object's own message.
  if (Array.isArray(issue.path?.[0]?.input)) return issue.message;
  if (path && issue.kind === 'schema' && issue.type === 'object' && issue.input === undefined) return `${path} is required`;
  if (!path || issue.message.startsWith(path.split('.')[0])) return issue.message;
  return `${path}: ${issue.message}`;
}
