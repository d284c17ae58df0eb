import { Hono } from 'hono';
import { describeRoute } from 'hono-openapi';
import type { AppEnv } from '../deps.js';
import { errorsFor } from '../http/openapi-helpers.js';
import { readLimited } from './body.js';
import { honoClientFacts } from './client-ip.js';
import { eventTooLarge, MAX_EVENT_BYTES, recordEvent, type EdgeFacts } from './record-event.js';

/** CORS of `POST /api/event`: any page may send events (the Node fast path answers the same). */
export const EVENT_CORS = { origin: '*', allowMethods: ['POST', 'OPTIONS'], allowHeaders: ['Content-Type'], maxAge: 86400 };

/** Public ingestion: `POST /api/event` from the tracker; the app puts EVENT_CORS in front of it and of its body limit. */
export function ingestPublicRoutes() {
  const app = new Hono<AppEnv>();
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
      const body = await readLimited(c.req.raw, MAX_EVENT_BYTES);
      if (!body) throw eventTooLarge();
      const cf = (c.req.raw as { cf?: EdgeFacts }).cf;
      const dropped = await recordEvent(c.get('services'), { ...honoClientFacts(c), body, cf });
      if (dropped) c.header('X-Sightline-Dropped', dropped);
      return c.body(null, 202);
    },
  );
  return app;
}
