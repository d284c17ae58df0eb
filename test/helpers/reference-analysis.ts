/**
 * The analysis pipeline's answers computed in plain TypeScript from generated events, sharing
 * nothing with src/analysis but its types: visits, their attributes, kept events, the seven
 * metrics, filters, dimensions, default order and paging are all worked out here, local dates
 * and hours with Intl. Only the period's from/now come from resolvePeriod.
 *
 * Within one session the generated timestamps are distinct, so "first" and "last" event are
 * never ties (ClickHouse's argMin would pick an arbitrary one of them).
 */
import type { Dimension, Filter, Metric } from '../../src/analysis/question.js';
import type { GenEvent } from './events-gen.js';

/** The period bounds the reference reads: [from, now], both inclusive; zone of the time buckets. */
export interface AnalysisPeriod {
  from: number;
  now: number;
  bucketTimeZone: string;
}

export interface RefQuestion {
  metrics: readonly Metric[];
  dimensions: readonly Dimension[];
  filters: readonly Filter[];
  limit?: number;
  offset?: number;
}

export type RefRow = Record<string, string | number | null>;

const COUNTED: ReadonlySet<GenEvent['kind']> = new Set(['pageview', 'custom', 'transaction']);
const isCustom = (e: GenEvent) => e.kind === 'custom' || e.kind === 'transaction';

/** One visit: its events in the period (ascending ts) and what they add up to. */
interface Visit {
  session: number;
  visitor: number;
  events: GenEvent[];
  attributes: Record<string, string>;
  pageviews: number;
  customs: number;
  leaves: number;
  durationMs: number;
}

/** Visit-level dimension → the first counted event's value (entry/exit: first/last pageview's path). */
const FIRST_EVENT_ATTRIBUTE: Readonly<Record<string, (e: GenEvent) => string>> = {
  source: (e) => e.referrerSource,
  utmSource: (e) => e.utmSource ?? '',
  utmMedium: (e) => e.utmMedium ?? '',
  utmCampaign: (e) => e.utmCampaign ?? '',
  utmTerm: (e) => e.utmTerm ?? '',
  utmContent: (e) => e.utmContent ?? '',
  country: (e) => e.countryCode,
  region: (e) => e.region ?? '',
  city: (e) => e.city,
  browser: (e) => e.browser,
  os: (e) => e.os,
  device: (e) => e.device,
};
const VISIT_LEVEL = new Set([...Object.keys(FIRST_EVENT_ATTRIBUTE), 'entryPage', 'exitPage', 'channel']);

const SEARCH_SITES = new Set(['google', 'google.com', 'duckduckgo.com']);
const SOCIAL_SITES = new Set(['facebook', 't.co', 'news.ycombinator.com']);
const KNOWN_SOURCES = new Set([...SEARCH_SITES, ...SOCIAL_SITES, '(direct)', '', 'newsletter']);

/**
 * A visit's channel from its source and UTM values, GA4's default grouping reduced to the
 * sources and media the generators use (it throws on any other source rather than guess): the
 * campaign's source wins over the referrer; paid media (`cp…`, `ppc`, `paid…`) are Paid Search /
 * Paid Social / Other; then social, search, email; an untagged source is Referral.
 */
export function channelFor(source: string, utmSource: string, utmMedium: string): string {
  const s = (utmSource || source).toLowerCase();
  const m = utmMedium.toLowerCase();
  if (!KNOWN_SOURCES.has(s)) throw new Error(`reference channel: unknown source ${s}`);
  if ((s === '(direct)' || s === '') && m === '') return 'Direct';
  if (m.includes('cp') || m === 'ppc' || m.startsWith('paid')) return SEARCH_SITES.has(s) ? 'Paid Search' : SOCIAL_SITES.has(s) ? 'Paid Social' : 'Other';
  if (SOCIAL_SITES.has(s) || m === 'social') return 'Organic Social';
  if (SEARCH_SITES.has(s) || m === 'organic') return 'Organic Search';
  if (m === 'email') return 'Email';
  return m === '' ? 'Referral' : 'Other';
}
const WILDCARD_DIMENSIONS = new Set(['page', 'entryPage', 'exitPage']);

function visitsOf(events: readonly GenEvent[], p: AnalysisPeriod): Map<number, Visit> {
  const visits = new Map<number, Visit>();
  const inside = events.filter((e) => e.ts >= p.from && e.ts <= p.now).sort((a, b) => a.ts - b.ts);
  for (const e of inside) {
    let v = visits.get(e.session);
    if (!v) visits.set(e.session, (v = { session: e.session, visitor: e.visitor, events: [], attributes: {}, pageviews: 0, customs: 0, leaves: 0, durationMs: 0 }));
    v.events.push(e);
    if (e.kind === 'pageview') v.pageviews++;
    if (isCustom(e)) v.customs++;
    if (e.kind === 'leave') {
      v.leaves++;
      v.durationMs += e.durationMs;
    }
  }
  for (const v of visits.values()) {
    const first = v.events.find((e) => COUNTED.has(e.kind));
    for (const [name, read] of Object.entries(FIRST_EVENT_ATTRIBUTE)) v.attributes[name] = first ? read(first) : '';
    const views = v.events.filter((e) => e.kind === 'pageview');
    v.attributes.entryPage = views[0]?.path ?? '';
    v.attributes.exitPage = views.at(-1)?.path ?? '';
    v.attributes.channel = channelFor(v.attributes.source!, v.attributes.utmSource!, v.attributes.utmMedium!);
  }
  return visits;
}

/** Local calendar parts of an instant in a zone, via Intl. */
function localParts(ms: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(ms);
  const part = (type: string) => parts.find((x) => x.type === type)!.value;
  return { date: `${part('year')}-${part('month')}-${part('day')}`, month: `${part('year')}-${part('month')}-01`, minute: Number(part('minute')), second: Number(part('second')) };
}

/** Start of the zone's clock hour holding `ms` (every zone here is offset by whole minutes). */
function hourStart(ms: number, timeZone: string): number {
  const { minute, second } = localParts(ms, timeZone);
  return ms - minute * 60_000 - second * 1000 - (((ms % 1000) + 1000) % 1000);
}

function eventValue(d: string, e: GenEvent, v: Visit, p: AnalysisPeriod): string {
  if (VISIT_LEVEL.has(d)) return v.attributes[d]!;
  if (d.startsWith('prop:')) return e.props?.[d.slice(5)] ?? '';
  switch (d) {
    case 'page':
      return e.path;
    case 'hostname':
      return e.hostname ?? 'example.com';
    case 'event':
      return e.eventName;
    // An event stamped exactly at now, on the hour, belongs to the hour before (the last one of the period).
    case 'time:hour':
      return new Date(Math.min(hourStart(e.ts, p.bucketTimeZone), hourStart(p.now - 1, p.bucketTimeZone))).toISOString();
    case 'time:day':
      return localParts(e.ts, p.bucketTimeZone).date;
    case 'time:month':
      return localParts(e.ts, p.bucketTimeZone).month;
  }
  throw new Error(`reference knows no dimension ${d}`);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `value` passes filter `f`: is / is_not (with `*` patterns where allowed), contains ignoring case. */
export function passes(f: Filter, value: string): boolean {
  if (f.op === 'contains') return f.values.some((x) => value.toLowerCase().includes(x.toLowerCase()));
  const matches = (x: string) =>
    WILDCARD_DIMENSIONS.has(f.dimension) && x.includes('*') ? new RegExp(`^${x.split('*').map(escapeRegExp).join('.*')}$`, 's').test(value) : x === value;
  const any = f.values.some(matches);
  return f.op === 'is' ? any : !any;
}

/** Compares strings by code point (ClickHouse compares UTF-8 bytes, which orders the same). */
export function byCodePoint(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

interface Group {
  values: string[];
  sessions: Set<number>;
  pageviews: number;
  events: number;
}

function metricOf(m: Metric, g: Group, visits: Map<number, Visit>): number | null {
  const vs = [...g.sessions].map((s) => visits.get(s)!);
  const withViews = vs.filter((v) => v.pageviews > 0).length;
  const withLeaves = vs.filter((v) => v.leaves > 0);
  switch (m) {
    case 'visitors':
      return new Set(vs.map((v) => v.visitor)).size;
    case 'sessions':
      return vs.length;
    case 'pageviews':
      return g.pageviews;
    case 'events':
      return g.events;
    case 'bounceRate':
      return withViews ? vs.filter((v) => v.pageviews === 1 && v.customs === 0).length / withViews : null;
    case 'viewsPerVisit':
      return withViews ? vs.reduce((s, v) => s + v.pageviews, 0) / withViews : null;
    case 'avgDurationSeconds':
      return withLeaves.length ? withLeaves.reduce((s, v) => s + v.durationMs, 0) / withLeaves.length / 1000 : null;
  }
}

/** Metric order for ranking: larger first, null after every number. */
function metricDesc(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return b - a;
}

/**
 * The rows a question answers over `events` in period `p`: kept events are counted events that
 * pass every event-level filter, in visits that pass every visit-level one; they are grouped by
 * the question's dimensions (an event's own value, or its visit's); groups with an empty value
 * are left out; default order, then offset and limit (only with dimensions).
 */
export function refAnswer(events: readonly GenEvent[], p: AnalysisPeriod, q: RefQuestion): RefRow[] {
  const visits = visitsOf(events, p);
  const groups = new Map<string, Group>();
  for (const v of visits.values()) {
    const visitFilters = q.filters.filter((f) => VISIT_LEVEL.has(f.dimension));
    if (!visitFilters.every((f) => passes(f, v.attributes[f.dimension]!))) continue;
    for (const e of v.events) {
      if (!COUNTED.has(e.kind)) continue;
      const eventFilters = q.filters.filter((f) => !VISIT_LEVEL.has(f.dimension));
      if (!eventFilters.every((f) => passes(f, eventValue(f.dimension, e, v, p)))) continue;
      const values = q.dimensions.map((d) => eventValue(d, e, v, p));
      const key = JSON.stringify(values);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { values, sessions: new Set(), pageviews: 0, events: 0 }));
      g.sessions.add(v.session);
      if (e.kind === 'pageview') g.pageviews++;
      if (isCustom(e)) g.events++;
    }
  }
  if (q.dimensions.length === 0) {
    // Without dimensions there is always one row, zero (or null) when nothing is kept.
    const g = groups.get('[]') ?? { values: [], sessions: new Set<number>(), pageviews: 0, events: 0 };
    return [Object.fromEntries(q.metrics.map((m) => [m, metricOf(m, g, visits)]))];
  }
  const rows = [...groups.values()]
    .filter((g) => g.values.every((x) => x !== ''))
    .map((g) => ({ g, metrics: q.metrics.map((m) => metricOf(m, g, visits)) }));
  const timeAt = q.dimensions.flatMap((d, i) => (d.startsWith('time:') ? [i] : []));
  const restAt = q.dimensions.flatMap((d, i) => (d.startsWith('time:') ? [] : [i]));
  rows.sort((a, b) => {
    for (const i of timeAt) {
      const c = byCodePoint(a.g.values[i]!, b.g.values[i]!);
      if (c) return c;
    }
    const c = metricDesc(a.metrics[0]!, b.metrics[0]!);
    if (c) return c;
    for (const i of restAt) {
      const c = byCodePoint(a.g.values[i]!, b.g.values[i]!);
      if (c) return c;
    }
    return 0;
  });
  const offset = q.offset ?? 0;
  return rows.slice(offset, offset + (q.limit ?? 10_000)).map(({ g, metrics }) => ({
    ...Object.fromEntries(q.dimensions.map((d, i) => [d, g.values[i]!])),
    ...Object.fromEntries(q.metrics.map((m, i) => [m, metrics[i]!])),
  }));
}
