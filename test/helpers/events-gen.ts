import fc from 'fast-check';
import type { InsertOptions, RowStore } from '../../src/adapters/row-store.js';

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
  /** Optional columns (analysis tests); absent ones are stored as the defaults below. */
  hostname?: string;
  region?: string;
  utmSource?: string;
  utmMedium?: string;
  utmCampaign?: string;
  utmTerm?: string;
  utmContent?: string;
  props?: Readonly<Record<string, string>>;
  /** No event of the session is older (epoch ms), as live ingestion stamps it; absent: unknown, as an import leaves it. */
  sessionFloor?: number;
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
 * and values so ranks tie often, and every kind including vitals (which no core report counts);
 * no two events of one session at the same instant.
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
  // A session's timestamps are distinct, so its first and last events are single events: of tied
  // ones the engine's argMin keeps whichever it reads first, which varies with how the read is split.
  return fc.uniqueArray(event, { maxLength: opts.maxLength ?? 60, selector: (e) => `${e.session}/${e.ts}` });
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

/** Inserts events for `projectId` straight into `events` (under `opts.token` when given); the materialized views fill the rollups. */
export async function insertEvents(store: RowStore, projectId: string, events: readonly GenEvent[], opts?: InsertOptions): Promise<void> {
  if (events.length === 0) return;
  await store.insert(
    'events',
    events.map((e) => ({
      project_id: projectId,
      ts: chTime(e.ts),
      kind: e.kind,
      visitor_id: e.visitor,
      session_id: e.session,
      session_floor: e.sessionFloor === undefined ? 0 : Math.floor(e.sessionFloor / 1000),
      hostname: e.hostname ?? 'example.com',
      path: e.path,
      referrer_source: e.referrerSource,
      utm_source: e.utmSource ?? '',
      utm_medium: e.utmMedium ?? '',
      utm_campaign: e.utmCampaign ?? '',
      utm_term: e.utmTerm ?? '',
      utm_content: e.utmContent ?? '',
      region: e.region ?? '',
      props: e.props ?? {},
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
    opts,
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

/** Paths of generated visits: LIKE metacharacters (`_`, `%`), a query string, upper case and non-ASCII. */
export const VISIT_PATHS = ['/', '/a_b', '/axb', '/blog/post-1', '/blog/post-2', '/pricing', '/docs/x?y=1', '/50%off', '/Über'];
export const VISIT_HOSTS = ['example.com', 'www.example.com', 'shop.example.com'];
export const VISIT_SOURCES = ['(direct)', 'google.com', 'news.ycombinator.com', 't.co', 'duckduckgo.com', 'newsletter'];
export const VISIT_REGIONS = ['NY', 'IL', 'BE', 'MH', ''];
/** UTM tuples [source, medium, campaign, term, content]; all empty = an untagged landing. */
export const VISIT_UTMS = [
  ['', '', '', '', ''],
  ['', '', '', '', ''],
  ['google', 'cpc', 'spring', 'shoes', 'ad1'],
  ['newsletter', 'email', 'Spring', '', 'top'],
  ['facebook', 'social', 'launch', '', ''],
] as const;
export const VISIT_PROPS = [{}, { plan: 'pro' }, { plan: 'Free', lang: 'de' }, { lang: 'en' }, { plan: '' }] as const;
export const VISIT_EVENT_NAMES = ['signup', 'download', 'Purchase', 'cta_click'];

/**
 * Whole visits: 1–6 visitors with 1–3 sessions each, every session starting at a time from
 * `starts` (its first event then) and running 1–8 steps (pageviews mostly, custom events with props, transactions,
 * leaves with durations, vitals) a few ms to a few hours apart, so visits span period edges and
 * days. Timestamps within a session are distinct. Each event may drift from the session's
 * landing attributes (source, UTM, place, tech, host), so only the first counted event's values
 * are the visit's.
 */
export function visitsArb(starts: fc.Arbitrary<number>): fc.Arbitrary<GenEvent[]> {
  const attributes = fc.record({
    referrerSource: fc.constantFrom(...VISIT_SOURCES),
    utm: fc.constantFrom(...VISIT_UTMS),
    place: fc.constantFrom(...PLACES),
    region: fc.constantFrom(...VISIT_REGIONS),
    device: fc.constantFrom(...DEVICES),
    browser: fc.constantFrom(...BROWSERS),
    os: fc.constantFrom(...OSES),
    hostname: fc.constantFrom(...VISIT_HOSTS),
  });
  const step = fc.record({
    gapMs: fc.oneof(fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: 3 * 3_600_000 })),
    kind: fc.constantFrom<GenEvent['kind']>('pageview', 'pageview', 'pageview', 'pageview', 'custom', 'custom', 'transaction', 'leave', 'leave', 'vitals'),
    path: fc.constantFrom(...VISIT_PATHS),
    eventName: fc.constantFrom(...VISIT_EVENT_NAMES),
    props: fc.constantFrom(...VISIT_PROPS),
    durationMs: fc.integer({ min: 0, max: 600_000 }),
    amountCents: fc.integer({ min: 1, max: 50_000 }),
    drift: fc.option(attributes, { freq: 3 }),
  });
  const session = fc.record({ start: starts, landing: attributes, steps: fc.array(step, { minLength: 1, maxLength: 8 }) });
  const visitor = fc.array(session, { minLength: 1, maxLength: 3 });
  return fc.array(visitor, { minLength: 1, maxLength: 6 }).map((visitors) =>
    visitors.flatMap((sessions, vi) =>
      sessions.flatMap((s, si) => {
        // The first step at the start itself (which may be a period edge), each later one after its gap.
        let ts = s.start - s.steps[0]!.gapMs;
        return s.steps.map((st): GenEvent => {
          ts += st.gapMs;
          const a = st.drift ?? s.landing;
          const named = st.kind === 'custom' || st.kind === 'transaction';
          return {
            ts,
            kind: st.kind,
            visitor: vi + 1,
            session: (vi + 1) * 10 + si,
            path: st.path,
            referrerSource: a.referrerSource,
            ...a.place,
            region: a.region,
            device: a.device,
            browser: a.browser,
            os: a.os,
            hostname: a.hostname,
            utmSource: a.utm[0],
            utmMedium: a.utm[1],
            utmCampaign: a.utm[2],
            utmTerm: a.utm[3],
            utmContent: a.utm[4],
            eventName: named ? st.eventName : '',
            amountCents: st.kind === 'transaction' ? st.amountCents : 0,
            currency: st.kind === 'transaction' ? 'USD' : '',
            durationMs: st.kind === 'leave' ? st.durationMs : 0,
            props: st.kind === 'leave' || st.kind === 'vitals' ? {} : st.props,
          };
        });
      }),
    ),
  );
}
