import * as v from 'valibot';
import { ApiError, Messages } from '../errors.js';
import { bodyTooLarge } from '../http/body-limit.js';
import { hostBelongsTo } from '../projects/domain.js';
import type { Services } from '../services.js';
import { BufferFullError } from './batcher.js';
import { clientAddress, type ClientFacts } from './client-ip.js';
import { verifyCrawler } from './enrich/bots.js';
import { sessionCall } from './enrich/session.js';
import { EventBody, firstIssue, parseHttpUrl, pathOf, type EventInput } from './event-schema.js';
import { acceptEventBody } from './fast-accept.js';
import type { GeoInfo } from './geo.js';
import { botHitRow, enrichEvent, visitorIdOf } from './pipeline.js';

/** Largest accepted `POST /api/event` body, in bytes. */
export const MAX_EVENT_BYTES = 8 * 1024;

/** The 413 of an event body over MAX_EVENT_BYTES. */
export const eventTooLarge = () => bodyTooLarge(MAX_EVENT_BYTES);

/** Why a well-formed event was not recorded; sent back in `X-Sightline-Dropped`. */
export type DropReason = 'unknown-site' | 'foreign-host' | 'bot' | 'excluded-ip' | 'throttled';

/** What Cloudflare's edge tells about a request (`request.cf`, Workers only). */
export interface EdgeFacts {
  country?: string;
  region?: string;
  city?: string;
  asn?: number;
  verifiedBotCategory?: string;
  botManagement?: { verifiedBot?: boolean };
}

/** An event request, whatever serves it: the body (already within MAX_EVENT_BYTES) and its client. */
export interface EventRequest extends ClientFacts {
  body: Uint8Array;
  cf?: EdgeFacts;
}

const decoder = new TextDecoder();

/**
 * Parses and validates an event body: JSON sent as application/json or text/plain (sendBeacon).
 * The common shapes pass the fast acceptor; anything else goes to the schema, which words the 400.
 */
function parseEvent(bytes: Uint8Array): { event: EventInput; url: URL } {
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new ApiError(400, 'Body must be a JSON object');
  }
  const fast = acceptEventBody(json);
  if (fast) return fast;
  const parsed = v.safeParse(EventBody, json);
  if (!parsed.success) throw new ApiError(400, firstIssue(parsed.issues));
  return { event: parsed.output, url: parseHttpUrl(parsed.output.url) as URL };
}

/** Geo Cloudflare resolved for this request (Workers only). */
function edgeGeo(cf: EdgeFacts | undefined): GeoInfo | null {
  if (!cf?.country || cf.country === 'XX' || cf.country === 'T1') return null;
  return { countryCode: cf.country, region: cf.region ?? '', city: cf.city ?? '', asn: cf.asn ?? 0 };
}

/** Cloudflare's own verified-bot signal, when the zone has Bot Management. */
function cfVerifiedBot(cf: EdgeFacts | undefined): boolean | undefined {
  return Boolean(cf?.verifiedBotCategory) || cf?.botManagement?.verifiedBot === true;
}

/**
 * Records one tracker event: validates it, drops what must not be counted (and
 * says why), enriches the rest and hands the row to the sink. Resolves once the row is
 * acknowledged by the sink; throws ApiError for input the contract refuses (400, 503).
 */
export async function recordEvent(services: Services, req: EventRequest): Promise<DropReason | undefined> {
  const { config, sink, clock } = services.deps;
  const state = services.ingest;
  const { event, url } = parseEvent(req.body);
  const project = await state.project(event.site);
  if (!project) return 'unknown-site';
  if (!hostBelongsTo(url.hostname, project.domain)) return 'foreign-host';
  const ip = clientAddress(req, config.TRUST_PROXY);
  if (await state.isExcluded(project.id, ip)) return 'excluded-ip';
  const userAgent = req.header('user-agent') ?? '';
  const now = clock.now();
  const bot = state.detectBot(userAgent);
  // A human event's session is looked up in the throttle's Redis call (one round trip, not
  // two); it needs the visitor id first. Should that fail (no salt yet and Redis down), the
  // throttle still decides and enrichEvent tries again, as it would without this shortcut.
  const visitorId = bot ? null : await visitorIdOf(state, project.id, event.visitorId, { ip, userAgent, now }).catch(() => null);
  const verdict = await state.throttle.check(project.id, ip, visitorId === null ? undefined : sessionCall(project.id, visitorId, now));
  if (!verdict.allowed) return 'throttled';
  try {
    if (bot) {
      const verified = await verifyCrawler(bot.slug, ip, { cfVerified: cfVerifiedBot(req.cf), rdns: state.rdns });
      await sink.write('bot_hits', [botHitRow(project.id, bot, { verified, path: pathOf(url), userAgent, now })]);
      return 'bot';
    }
    const identity = visitorId !== null && verdict.session !== undefined ? { visitorId, session: verdict.session } : undefined;
    const row = await enrichEvent(state, project, { ...event, url }, { ip, userAgent, now, edgeGeo: edgeGeo(req.cf), identity });
    await sink.write('events', [row]);
  } catch (err) {
    if (err instanceof BufferFullError) throw new ApiError(503, Messages.unavailable, { 'Retry-After': '5' });
    throw err;
  }
  await state.markSeen(project.id, now);
  return undefined;
}
