/**
 * The reports computed in plain TypeScript from the generated events, independently of the SQL:
 * only the period start and the bucket start instants (from resolvePeriod) are shared; the end
 * (now, inclusive), which bucket an event falls in and how many buckets there are, are worked
 * out here with Intl. Names are ASCII, so JS string order
 * equals ClickHouse's byte order.
 */
import type { GenEvent } from './events-gen.js';

/** The period bounds the reference needs (a ResolvedPeriod fits). */
export interface RefPeriod {
  key: string;
  from: number;
  now: number;
  granularity: 'hour' | 'day' | 'month';
  bucketTimeZone: string;
  buckets: number[];
}

const asc = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const iso = (ms: number) => new Date(ms).toISOString();
const head = (p: RefPeriod) => ({ period: p.key, from: iso(p.from), to: iso(p.now) });
const inPeriod = (p: RefPeriod, kinds: GenEvent['kind'][]) => (e: GenEvent) => e.ts >= p.from && e.ts <= p.now && kinds.includes(e.kind);

/** Groups events by a key, keeping pageview count and the distinct visitors. */
function tally<K>(events: GenEvent[], key: (e: GenEvent) => K) {
  const groups = new Map<string, { key: K; pageviews: number; visitors: Set<number> }>();
  for (const e of events) {
    const k = key(e);
    const id = JSON.stringify(k);
    const g = groups.get(id) ?? { key: k, pageviews: 0, visitors: new Set<number>() };
    g.pageviews++;
    g.visitors.add(e.visitor);
    groups.set(id, g);
  }
  return [...groups.values()].map((g) => ({ key: g.key, pageviews: g.pageviews, visitors: g.visitors.size }));
}

/** The visits of the period: each session's events in it, for sessions with a pageview, custom or transaction event there. */
function visitsOf(events: GenEvent[], p: RefPeriod): GenEvent[][] {
  const sessions = new Map<number, GenEvent[]>();
  for (const e of events.filter(inPeriod(p, ['pageview', 'leave', 'custom', 'transaction', 'vitals']))) sessions.set(e.session, [...(sessions.get(e.session) ?? []), e]);
  return [...sessions.values()].filter((all) => all.some((e) => e.kind === 'pageview' || e.kind === 'custom' || e.kind === 'transaction'));
}

/**
 * Stats: pageviews, distinct visitors and sessions of pageviews; summed leave durations per
 * session with a leave; bounce rate and views per visit over the visits with a pageview.
 */
export function refStats(events: GenEvent[], p: RefPeriod) {
  const views = events.filter(inPeriod(p, ['pageview']));
  const leaves = events.filter(inPeriod(p, ['leave']));
  const pageviewsOf = (visit: GenEvent[]) => visit.filter((e) => e.kind === 'pageview').length;
  const viewed = visitsOf(events, p).filter((visit) => pageviewsOf(visit) > 0);
  const bounces = viewed.filter((visit) => pageviewsOf(visit) === 1 && !visit.some((e) => e.kind === 'custom' || e.kind === 'transaction'));
  return {
    ...head(p),
    pageviews: views.length,
    visitors: new Set(views.map((e) => e.visitor)).size,
    sessions: new Set(views.map((e) => e.session)).size,
    avgDurationSeconds: leaves.length ? leaves.reduce((s, e) => s + e.durationMs / 1000, 0) / new Set(leaves.map((e) => e.session)).size : null,
    bounceRate: viewed.length ? bounces.length / viewed.length : null,
    viewsPerVisit: viewed.length ? viewed.reduce((s, visit) => s + pageviewsOf(visit), 0) / viewed.length : null,
  };
}

/** Calendar date of an instant in a zone, via Intl (not Temporal, unlike periods.ts). */
function localDate(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
}

/** Start of the zone's clock hour holding `ms` (local minutes and seconds via Intl). */
function localHourStart(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone, minute: '2-digit', second: '2-digit' }).formatToParts(ms);
  const part = (type: string) => Number(parts.find((x) => x.type === type)!.value);
  return ms - part('minute') * 60_000 - part('second') * 1000 - (((ms % 1000) + 1000) % 1000);
}

/** The bucket keys of the period, in order: clock-hour starts of [from, now) or local dates from `from` to now's. */
function bucketKeysOf(p: RefPeriod): string[] {
  const keys: string[] = [];
  if (p.granularity === 'hour') {
    for (let t = localHourStart(p.from, p.bucketTimeZone); t < p.now; t += 3_600_000) keys.push(iso(t));
    return keys;
  }
  const last = localDate(p.now, p.bucketTimeZone);
  if (p.granularity === 'month') {
    const [y, m] = localDate(p.from, p.bucketTimeZone).split('-').map(Number) as [number, number];
    for (let i = 0; ; i++) {
      const month = new Date(Date.UTC(y, m - 1 + i, 1)).toISOString().slice(0, 7);
      keys.push(month);
      if (month >= last.slice(0, 7)) return keys;
    }
  }
  const [y, m, d] = localDate(p.from, p.bucketTimeZone).split('-').map(Number) as [number, number, number];
  for (let i = 0; ; i++) {
    const date = new Date(Date.UTC(y, m - 1, d + i)).toISOString().slice(0, 10);
    keys.push(date);
    if (date >= last) return keys;
  }
}

/**
 * Time series: clock hours of the zone (an event exactly at now, on the hour, in the last one),
 * or local dates via Intl; zero-filled up to the bucket holding now. `date` is the bucket start
 * resolvePeriod gives for the same position (a missing one fails the comparison).
 */
export function refTimeseries(events: GenEvent[], p: RefPeriod) {
  const views = events.filter(inPeriod(p, ['pageview']));
  const keys = bucketKeysOf(p);
  const bucketOf =
    p.granularity === 'hour'
      ? (ms: number) => (ms === p.now && localHourStart(ms, p.bucketTimeZone) === ms ? keys.at(-1)! : iso(localHourStart(ms, p.bucketTimeZone)))
      : p.granularity === 'month'
        ? (ms: number) => localDate(ms, p.bucketTimeZone).slice(0, 7)
        : (ms: number) => localDate(ms, p.bucketTimeZone);
  const groups = new Map(tally(views, (e) => bucketOf(e.ts)).map((g) => [g.key, g]));
  const data = keys.map((key, i) => {
    const g = groups.get(key);
    const start = p.buckets[i];
    return { date: start === undefined ? 'missing bucket' : iso(start), pageviews: g?.pageviews ?? 0, visitors: g?.visitors ?? 0 };
  });
  return { ...head(p), granularity: p.granularity, data };
}

/** Pages by pageviews, ties by path. */
export function refPages(events: GenEvent[], p: RefPeriod, limit: number) {
  const rows = tally(events.filter(inPeriod(p, ['pageview'])), (e) => e.path)
    .sort((a, b) => b.pageviews - a.pageviews || asc(a.key, b.key))
    .slice(0, limit);
  return { ...head(p), data: rows.map((r) => ({ path: r.key, pageviews: r.pageviews, visitors: r.visitors })) };
}

/**
 * Referrers by pageviews, per visit: all of a visit's pageviews and its visitor go to the source
 * of its first pageview, custom or transaction event (an empty source counted as (direct)).
 */
export function refReferrers(events: GenEvent[], p: RefPeriod, limit: number) {
  const groups = new Map<string, { pageviews: number; visitors: Set<number> }>();
  for (const visit of visitsOf(events, p)) {
    const first = visit.filter((e) => e.kind === 'pageview' || e.kind === 'custom' || e.kind === 'transaction').sort((a, b) => a.ts - b.ts)[0]!;
    const g = groups.get(first.referrerSource || '(direct)') ?? { pageviews: 0, visitors: new Set<number>() };
    g.pageviews += visit.filter((e) => e.kind === 'pageview').length;
    g.visitors.add(first.visitor);
    groups.set(first.referrerSource || '(direct)', g);
  }
  const rows = [...groups.entries()]
    .map(([key, g]) => ({ key, pageviews: g.pageviews, visitors: g.visitors.size }))
    .sort((a, b) => b.pageviews - a.pageviews || asc(a.key, b.key))
    .slice(0, limit);
  return { ...head(p), data: rows.map((r) => ({ referrer: r.key, pageviews: r.pageviews, visitors: r.visitors })) };
}

/** Countries by pageviews (known codes only), ties by name then code. */
export function refCountries(events: GenEvent[], p: RefPeriod, limit: number) {
  const known = events.filter(inPeriod(p, ['pageview'])).filter((e) => e.countryCode !== '');
  const rows = tally(known, (e) => [e.countryName, e.countryCode] as const)
    .sort((a, b) => b.pageviews - a.pageviews || asc(a.key[0], b.key[0]) || asc(a.key[1], b.key[1]))
    .slice(0, limit);
  return { ...head(p), data: rows.map((r) => ({ country: r.key[0], country_code: r.key[1], pageviews: r.pageviews, visitors: r.visitors })) };
}

/** Cities by distinct visitors (known cities only), ties by city then code. */
export function refCities(events: GenEvent[], p: RefPeriod, limit: number) {
  const known = events.filter(inPeriod(p, ['pageview'])).filter((e) => e.city !== '');
  const rows = tally(known, (e) => [e.city, e.countryName, e.countryCode] as const)
    .sort((a, b) => b.visitors - a.visitors || asc(a.key[0], b.key[0]) || asc(a.key[2], b.key[2]))
    .slice(0, limit);
  return {
    ...head(p),
    data: rows.map((r) => ({ city: r.key[0], country: r.key[1], country_code: r.key[2], visitors: r.visitors, pageviews: r.pageviews })),
  };
}

function byVisitors(events: GenEvent[], name: (e: GenEvent) => string) {
  return tally(events, (e) => name(e) || 'Unknown')
    .map((r) => ({ name: r.key, visitors: r.visitors }))
    .sort((a, b) => b.visitors - a.visitors || asc(a.name, b.name));
}

/** Devices, browsers and OS by distinct visitors, empty names as Unknown. */
export function refDevices(events: GenEvent[], p: RefPeriod) {
  const views = events.filter(inPeriod(p, ['pageview']));
  return { ...head(p), devices: byVisitors(views, (e) => e.device), browsers: byVisitors(views, (e) => e.browser), os: byVisitors(views, (e) => e.os) };
}

/** Browsers by distinct visitors, top `limit`. */
export function refBrowsers(events: GenEvent[], p: RefPeriod, limit: number) {
  return { ...head(p), data: byVisitors(events.filter(inPeriod(p, ['pageview'])), (e) => e.browser).slice(0, limit) };
}

/** Operating systems by distinct visitors, top `limit`. */
export function refOs(events: GenEvent[], p: RefPeriod, limit: number) {
  return { ...head(p), data: byVisitors(events.filter(inPeriod(p, ['pageview'])), (e) => e.os).slice(0, limit) };
}

/** Custom + transaction events by count; amount only for a single currency; pct of the returned rows. */
export function refEvents(events: GenEvent[], p: RefPeriod, limit: number) {
  const byName = new Map<string, GenEvent[]>();
  for (const e of events.filter(inPeriod(p, ['custom', 'transaction']))) byName.set(e.eventName, [...(byName.get(e.eventName) ?? []), e]);
  const rows = [...byName.entries()]
    .map(([name, es]) => {
      const tx = es.filter((e) => e.kind === 'transaction');
      const currencies = new Set(tx.map((e) => e.currency));
      const single = tx.length > 0 && currencies.size === 1;
      return {
        name,
        people: new Set(es.map((e) => e.visitor)).size,
        events: es.length,
        amountCents: single ? tx.reduce((s, e) => s + e.amountCents, 0) : null,
        currency: single ? tx[0]!.currency : null,
        transactions: tx.length,
      };
    })
    .sort((a, b) => b.events - a.events || asc(a.name, b.name))
    .slice(0, limit);
  const total = rows.reduce((s, r) => s + r.events, 0);
  return { ...head(p), data: rows.map((r) => ({ name: r.name, people: r.people, events: r.events, pct: r.events / total, amountCents: r.amountCents, currency: r.currency, transactions: r.transactions })) };
}
