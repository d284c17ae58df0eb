import fc from 'fast-check';
import type { RowStore } from '../../src/adapters/row-store.js';

/** A generated event: the columns the reports read, as the reference sees them. */
export interface GenEvent {
  ts: number;
  kind: 'pageview' | 'leave' | 'custom' | 'transaction' | 'vitals';
  visitor: number;
  session: number;
  path: string;
  referrerSource: string;
  countryCode: string;
  countryName: string;
  city: string;
  device: string;
  browser: string;
  os: string;
  eventName: string;
  amountCents: number;
  currency: string;
  durationMs: number;
}

const PATHS = ['/', '/a', '/b', '/blog/post-1', '/pricing', '/docs/x?y=1', '/Z'];
const SOURCES = ['(direct)', 'google.com', 'news.ycombinator.com', 't.co', 'duckduckgo.com'];
/** Geo tuples as enrichment writes them; an empty code means unknown country, empty city unknown city. */
const PLACES = [
  { countryCode: 'US', countryName: 'United States', city: 'New York' },
  { countryCode: 'US', countryName: 'United States', city: 'Chicago' },
  { countryCode: 'DE', countryName: 'Germany', city: 'Berlin' },
  { countryCode: 'DE', countryName: 'Germany', city: '' },
  { countryCode: 'IN', countryName: 'India', city: 'Mumbai' },
  { countryCode: 'NP', countryName: 'Nepal', city: 'Kathmandu' },
  { countryCode: '', countryName: '', city: '' },
];
const DEVICES = ['Desktop', 'Mobile', 'Tablet', 'Unknown', ''];
const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', ''];
const OSES = ['Windows', 'macOS', 'iOS', 'Android', 'Linux', ''];
const NAMES = ['signup', 'download', 'Purchase', 'cta_click', 'upgrade'];
const CURRENCIES = ['USD', 'EUR', 'INR'];

/**
 * Events with timestamps drawn from `times` (callers bias them to period edges), few visitors
 * and values so ranks tie often, and every kind including vitals (which no core report counts).
 */
export function eventsArb(times: fc.Arbitrary<number>, opts: { maxLength?: number } = {}): fc.Arbitrary<GenEvent[]> {
  const event = fc
    .record({
      ts: times,
      kind: fc.constantFrom<GenEvent['kind']>('pageview', 'pageview', 'pageview', 'pageview', 'leave', 'leave', 'custom', 'transaction', 'vitals'),
      visitor: fc.integer({ min: 1, max: 8 }),
      sessionSlot: fc.integer({ min: 0, max: 2 }),
      path: fc.constantFrom(...PATHS),
      referrerSource: fc.constantFrom(...SOURCES),
      place: fc.constantFrom(...PLACES),
      device: fc.constantFrom(...DEVICES),
      browser: fc.constantFrom(...BROWSERS),
      os: fc.constantFrom(...OSES),
      eventName: fc.constantFrom(...NAMES),
      amountCents: fc.integer({ min: 0, max: 500_000 }),
      currency: fc.constantFrom(...CURRENCIES),
      durationMs: fc.integer({ min: 0, max: 3_600_000 }),
    })
    .map(({ sessionSlot, place, ...e }): GenEvent => {
      const named = e.kind === 'custom' || e.kind === 'transaction';
      return {
        ...e,
        ...place,
        // Session ids are per visitor, as the ingest derives them.
        session: e.visitor * 10 + sessionSlot,
        eventName: named ? e.eventName : '',
        amountCents: e.kind === 'transaction' ? e.amountCents : 0,
        currency: e.kind === 'transaction' ? e.currency : '',
        durationMs: e.kind === 'leave' ? e.durationMs : 0,
      };
    });
  return fc.array(event, { maxLength: opts.maxLength ?? 60 });
}

/** Times around a period: uniform over a widened window plus exact edges (±1 ms) of its buckets. */
export function timesAround(from: number, to: number, edges: readonly number[]): fc.Arbitrary<number> {
  const margin = Math.max(3_600_000, Math.round((to - from) * 0.1));
  const edgeTimes = [...edges, to].flatMap((t) => [t - 1, t, t + 1]);
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: from - margin, max: to + margin }) },
    { weight: 1, arbitrary: fc.constantFrom(...edgeTimes) },
  );
}

const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** Inserts events for `projectId` straight into `events`; the materialized views fill the rollups. */
export async function insertEvents(store: RowStore, projectId: string, events: readonly GenEvent[]): Promise<void> {
  if (events.length === 0) return;
  await store.insert(
    'events',
    events.map((e) => ({
      project_id: projectId,
      ts: chTime(e.ts),
      kind: e.kind,
      visitor_id: e.visitor,
      session_id: e.session,
      hostname: 'example.com',
      path: e.path,
      referrer_source: e.referrerSource,
      country_code: e.countryCode,
      country_name: e.countryName,
      city: e.city,
      device: e.device,
      browser: e.browser,
      os: e.os,
      event_name: e.eventName,
      amount_cents: e.amountCents,
      currency: e.currency,
      duration_ms: e.durationMs,
      lcp: e.kind === 'vitals' ? 1234 : null,
    })),
  );
}

/** One event with plain defaults (a desktop Chrome pageview of `/` from nowhere); override what matters. */
export function makeEvent(e: Partial<GenEvent> & { ts: number }): GenEvent {
  return {
    kind: 'pageview',
    visitor: 1,
    // One session per visitor unless the caller says otherwise, as the ingest would derive it.
    session: (e.visitor ?? 1) * 10,
    path: '/',
    referrerSource: '(direct)',
    countryCode: 'US',
    countryName: 'United States',
    city: 'New York',
    device: 'Desktop',
    browser: 'Chrome',
    os: 'Windows',
    eventName: '',
    amountCents: 0,
    currency: '',
    durationMs: 0,
    ...e,
  };
}
