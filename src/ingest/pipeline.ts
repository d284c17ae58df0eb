import type { Project } from '../projects/store.js';
import { countryName } from './enrich/countries.js';
import { referrerSource, parseUtm, type Utm } from './enrich/referrer.js';
import { sessionId, slotSession, type Session } from './enrich/session.js';
import { isStoreUnavailable } from '../errors.js';
import { hashToUInt64 } from './enrich/visitor.js';
import type { EventKind } from './event-schema.js';
import { pathOf } from './event-schema.js';
import type { GeoInfo } from './geo.js';
import { chTimestamp } from './insert.js';
import type { IngestState } from './state.js';
import type { UInt64 } from '../adapters/uint64.js';
import { validText } from './valid-text.js';

/** What the edge knows about the request an event came in. */
export interface RequestFacts {
  ip: string;
  userAgent: string;
  /** Event time, epoch ms. */
  now: number;
  /** Geo the platform already resolved (Workers `request.cf`); otherwise looked up by IP. */
  edgeGeo?: GeoInfo | null;
  /** Visitor id and session already found (the throttle's Redis call looks the session up too). */
  identity?: { visitorId: string; session: Session };
}

/** The event fields that reach a row, after validation. */
export interface EventFields {
  kind: EventKind;
  url: URL;
  referrer?: string | null;
  name?: string;
  props?: Record<string, string | number | boolean>;
  amountCents?: number;
  currency?: string;
  durationMs?: number;
  vitals?: { lcp?: number; inp?: number; cls?: number; fcp?: number; ttfb?: number };
  screenWidth?: number;
  /** A first-party id the tracker persisted (`data-persist`); replaces the daily hash. */
  visitorId?: string;
}

/** Props are stored as Map(String, String): numbers and booleans keep their JSON text; keys and strings made valid text. */
export function propsToMap(props: Record<string, string | number | boolean> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!props) return out;
  for (const [k, v] of Object.entries(props)) out[validText(k)] = typeof v === 'string' ? validText(v) : String(v);
  return out;
}

/** A string column's value, or undefined for '' (the column default, left out of the insert). */
const ifSet = (s: string): string | undefined => (s === '' ? undefined : s);

/** Who and where an event came from: enriched at the edge, or given explicitly by an import. */
export interface EventDimensions {
  /** Decimal text, or the words of a hashed id (imports; see UInt64). */
  visitorId: string | UInt64;
  sessionId: string | UInt64;
  /** No event of the session is older (epoch ms; see SESSION_LUA); absent when unknown (imports). */
  sessionFloorMs?: number;
  countryCode: string;
  region: string;
  city: string;
  device: string;
  browser: string;
  browserVersion: string;
  os: string;
  osVersion: string;
  /** 0 when unknown (only Workers' request.cf provides it). */
  asn?: number;
}

const NO_UTM = Object.freeze({ utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '' });

/** UTM values are percent-decoded (`%00` is a NUL) and cut at 200 units (which may split a surrogate pair). */
const validUtm = (utm: Utm): Utm => ({
  utm_source: validText(utm.utm_source),
  utm_medium: validText(utm.utm_medium),
  utm_campaign: validText(utm.utm_campaign),
  utm_term: validText(utm.utm_term),
  utm_content: validText(utm.utm_content),
});

// Country names come from Intl (tens of µs a call); at most 26² codes, so remember them.
const countryNames = new Map<string, string>();
const nameOfCountry = (code: string): string => {
  if (!code) return '';
  let name = countryNames.get(code);
  if (name === undefined) {
    name = countryName(code);
    countryNames.set(code, name);
  }
  return name;
};

/**
 * The `events` row of an event: its own fields plus `d`. One object literal in column order (the
 * hot path builds one per event). Referrers from the project's domain or any subdomain are
 * internal navigation: `(direct)`. A field at its column default ('', 0, no props, no metric) is
 * undefined: JSON leaves it out and ClickHouse fills the default, so a typical event sends about
 * half of its 35 columns (less to encode here, less for the engine to parse).
 *
 * Every ingest path (tracker events, hits, imports; on Workers the queue carries these rows)
 * builds its events here, so this is where text is made valid for storage: each string that
 * comes from the request or its enrichment passes validText. Not needed for the URL's hostname
 * and path (the URL parser refuses bad hosts and percent-encodes controls and lone surrogates in
 * paths and fragments), `kind` and `currency` (checked against closed lists) or our own values.
 */
export function eventRow(project: Pick<Project, 'id' | 'domain'>, e: EventFields, ts: number, d: EventDimensions): Record<string, unknown> {
  // Most URLs carry no UTM tags; skip the query parse for them.
  const utm = e.url.search.includes('utm_') ? validUtm(parseUtm(e.url)) : NO_UTM;
  const referrer = validText(e.referrer ?? '');
  const countryCode = validText(d.countryCode);
  return {
    project_id: project.id,
    ts: chTimestamp(ts),
    kind: e.kind,
    visitor_id: d.visitorId,
    session_id: d.sessionId,
    // Whole seconds, down: still no later than any of the session's events.
    session_floor: d.sessionFloorMs ? Math.floor(d.sessionFloorMs / 1000) : undefined,
    hostname: e.url.hostname,
    path: pathOf(e.url),
    referrer: ifSet(referrer),
    referrer_source: referrerSource(referrer, project.domain, utm.utm_source),
    utm_source: ifSet(utm.utm_source),
    utm_medium: ifSet(utm.utm_medium),
    utm_campaign: ifSet(utm.utm_campaign),
    utm_term: ifSet(utm.utm_term),
    utm_content: ifSet(utm.utm_content),
    country_code: ifSet(countryCode),
    country_name: ifSet(nameOfCountry(countryCode)),
    region: ifSet(validText(d.region)),
    city: ifSet(validText(d.city)),
    asn: d.asn || undefined,
    device: ifSet(validText(d.device)),
    browser: ifSet(validText(d.browser)),
    browser_version: ifSet(validText(d.browserVersion)),
    os: ifSet(validText(d.os)),
    os_version: ifSet(validText(d.osVersion)),
    screen_width: e.screenWidth || undefined,
    event_name: e.name ? ifSet(validText(e.name)) : undefined,
    props: e.props ? propsToMap(e.props) : undefined,
    amount_cents: e.amountCents || undefined,
    currency: e.currency || undefined,
    duration_ms: Math.round(e.durationMs ?? 0) || undefined,
    // 0 is a measurement (CLS 0); only a missing metric is left to the column's NULL.
    lcp: e.vitals?.lcp,
    inp: e.vitals?.inp,
    cls: e.vitals?.cls,
    fcp: e.vitals?.fcp,
    ttfb: e.vitals?.ttfb,
  };
}

const sessionDimensions = (session: Session) => ({ sessionId: session.id, sessionFloorMs: session.floorMs });

/**
 * Turns an accepted event into its `events` row: user agent → browser/OS/device, IP → geo (never
 * stored), visitor id from the daily-salted hash (or the persisted first-party id), session id
 * from the 30-minute idle window in Redis.
 */
export async function enrichEvent(state: IngestState, project: Project, e: EventFields, facts: RequestFacts): Promise<Record<string, unknown>> {
  const ua = state.parseUa(facts.userAgent);
  const geo = facts.edgeGeo ?? (facts.ip ? state.geo?.lookup(facts.ip) : null) ?? null;
  const visitorId = facts.identity?.visitorId ?? (await visitorIdOf(state, project.id, e.visitorId, facts));
  return eventRow(project, e, facts.now, {
    visitorId,
    ...sessionDimensions(
      facts.identity?.session ??
        (await sessionId(state.redis, project.id, visitorId, facts.now).catch((err: unknown) => {
          // Redis slow or down: keep the event with a session of its 30-minute slot rather than refuse it.
          if (!isStoreUnavailable(err)) throw err;
          return slotSession(visitorId, facts.now);
        })),
    ),
    countryCode: geo?.countryCode ?? '',
    region: geo?.region ?? '',
    city: geo?.city ?? '',
    asn: geo?.asn ?? 0,
    device: ua.device,
    browser: ua.browser,
    browserVersion: ua.browserVersion,
    os: ua.os,
    osVersion: ua.osVersion,
  });
}

/**
 * The visitor id of an event: the persisted first-party id (`data-persist`) hashed per project,
 * else the daily-salted hash of IP and user agent.
 */
export function visitorIdOf(state: IngestState, projectId: string, persisted: string | undefined, facts: Pick<RequestFacts, 'ip' | 'userAgent' | 'now'>): Promise<string> {
  return persisted
    ? Promise.resolve(hashToUInt64(`${projectId}:${persisted}`))
    : state.hasher.visitorId(projectId, facts.ip, facts.userAgent, facts.now);
}

/** A `bot_hits` row; the path (raw in `/hits`) and user agent made valid text (see eventRow). */
export function botHitRow(
  projectId: string,
  bot: { slug: string; name: string; category: string },
  hit: { verified: boolean; path: string; status?: number; userAgent: string; now: number },
): Record<string, unknown> {
  return {
    project_id: projectId,
    ts: chTimestamp(hit.now),
    bot_slug: bot.slug,
    bot_name: bot.name,
    category: bot.category,
    verified: hit.verified ? 1 : 0,
    path: validText(hit.path),
    status: hit.status ?? 0,
    // After the cut, which may split a surrogate pair.
    user_agent: validText(hit.userAgent.slice(0, 1024)),
  };
}
