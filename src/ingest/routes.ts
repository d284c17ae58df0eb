import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { describeRoute } from 'hono-openapi';
import * as v from 'valibot';
import type { AppEnv } from '../deps.js';
import { ApiError, Messages } from '../errors.js';
import { errorsFor } from '../http/openapi-helpers.js';
import { hostBelongsTo } from '../projects/domain.js';
import { BufferFullError } from './batcher.js';
import { readLimited } from './body.js';
import { clientIp } from './client-ip.js';
import { verifyCrawler } from './enrich/bots.js';
import { EventBody, firstIssue, parseHttpUrl, pathOf } from './event-schema.js';
import type { GeoInfo } from './geo.js';
import { sessionCall } from './enrich/session.js';
import { botHitRow, enrichEvent, visitorIdOf } from './pipeline.js';

/** Largest accepted `POST /api/event` body, in bytes. */
export const MAX_EVENT_BYTES = 8 * 1024;

/** Why a well-formed event was not recorded; sent back in `X-Sightline-Dropped`. */
export type DropReason = 'unknown-site' | 'foreign-host' | 'bot' | 'excluded-ip' | 'throttled';

const decoder = new TextDecoder();

const accepted = (c: Context, dropped?: DropReason) => {
  if (dropped) c.header('X-Sightline-Dropped', dropped);
  return c.body(null, 202);
};

/** Geo Cloudflare resolved for this request (Workers only). */
function edgeGeo(req: Request): GeoInfo | null {
  const cf = (req as { cf?: { country?: string; region?: string; city?: string; asn?: number } }).cf;
  if (!cf?.country || cf.country === 'XX' || cf.country === 'T1') return null;
  return { countryCode: cf.country, region: cf.region ?? '', city: cf.city ?? '', asn: cf.asn ?? 0 };
}

/** Reads and validates the body: JSON sent as application/json or text/plain (sendBeacon). */
async function readEvent(req: Request) {
  const bytes = await readLimited(req, MAX_EVENT_BYTES);
  if (!bytes) throw new ApiError(413, `Body must be at most ${MAX_EVENT_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new ApiError(400, 'Body must be a JSON object');
  }
  const parsed = v.safeParse(EventBody, json);
  if (!parsed.success) throw new ApiError(400, firstIssue(parsed.issues));
  return parsed.output;
}

/** Public ingestion: `POST /api/event` from the tracker (DESIGN.md §6), CORS `*`. */
export function ingestPublicRoutes() {
  const app = new Hono<AppEnv>();
  app.use('/api/event', cors({ origin: '*', allowMethods: ['POST', 'OPTIONS'], allowHeaders: ['Content-Type'], maxAge: 86400 }));
  app.post(
    '/api/event',
    describeRoute({
      tags: ['Ingestion'],
      summary: 'Record a tracker event',
      description:
        'Public, CORS `*`. JSON or text/plain body of at most 8 KB: `{site, kind, url, referrer?, name?, props?, amountCents?, currency?, durationMs?, vitals?, screenWidth?, visitorId?}`. ' +
        'Always 202 for well-formed input; events that are not recorded carry `X-Sightline-Dropped: unknown-site | foreign-host | bot | excluded-ip | throttled`.',
      responses: { 202: { description: 'Accepted (or dropped, see X-Sightline-Dropped)' }, ...errorsFor(400, 413, 503) },
    }),
    async (c) => {
      const services = c.get('services');
      const { config, sink, clock } = services.deps;
      const state = services.ingest;
      const event = await readEvent(c.req.raw);
      const project = await state.project(event.site);
      if (!project) return accepted(c, 'unknown-site');
      const url = parseHttpUrl(event.url) as URL;
      if (!hostBelongsTo(url.hostname, project.domain)) return accepted(c, 'foreign-host');
      const ip = clientIp(c, config.TRUST_PROXY);
      if (await state.isExcluded(project.id, ip)) return accepted(c, 'excluded-ip');
      const userAgent = c.req.header('user-agent') ?? '';
      const now = clock.now();
      const bot = state.detectBot(userAgent);
      // A human event's session is looked up in the throttle's Redis call (one round trip, not
      // two); it needs the visitor id first. Should that fail (no salt yet and Redis down), the
      // throttle still decides and enrichEvent tries again, as it would without this shortcut.
      const visitorId = bot ? null : await visitorIdOf(state, project.id, event.visitorId, { ip, userAgent, now }).catch(() => null);
      const verdict = await state.throttle.check(project.id, ip, visitorId === null ? undefined : sessionCall(project.id, visitorId, now));
      if (!verdict.allowed) return accepted(c, 'throttled');
      try {
        if (bot) {
          const verified = await verifyCrawler(bot.slug, ip, { cfVerified: cfVerifiedBot(c.req.raw), rdns: state.rdns });
          await sink.write('bot_hits', [botHitRow(project.id, bot, { verified, path: pathOf(url), userAgent, now })]);
          return accepted(c, 'bot');
        }
        const identity = visitorId !== null && verdict.sessionId !== undefined ? { visitorId, sessionId: verdict.sessionId } : undefined;
        const row = await enrichEvent(state, project, { ...event, url }, { ip, userAgent, now, edgeGeo: edgeGeo(c.req.raw), identity });
        await sink.write('events', [row]);
      } catch (err) {
        if (err instanceof BufferFullError) throw new ApiError(503, Messages.unavailable, { 'Retry-After': '5' });
        throw err;
      }
      await state.markSeen(project.id, now);
      return accepted(c);
    },
  );
  return app;
}

/** Cloudflare's own verified-bot signal, when the zone has Bot Management. */
function cfVerifiedBot(req: Request): boolean | undefined {
  const cf = (req as { cf?: { verifiedBotCategory?: string; botManagement?: { verifiedBot?: boolean } } }).cf;
  return Boolean(cf?.verifiedBotCategory) || cf?.botManagement?.verifiedBot === true;
}
