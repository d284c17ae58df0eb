import { Hono } from 'hono';
import type { AppEnv } from '../deps.js';
import { TRACKER_ETAG, TRACKER_JS } from './tracker.generated.js';

/** Cache a day, then revalidate in the background for a week: sites embed the same URL forever. */
const CACHE_CONTROL = 'public, max-age=86400, stale-while-revalidate=604800';

/** Whether an If-None-Match header names this ETag (weak comparison, as RFC 9110 asks for GET). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** GET /script.js: the browser tracker (src/tracker/tracker.js, minified at build time). */
export function trackerRoutes() {
  const app = new Hono<AppEnv>();
  app.get('/script.js', (c) => {
    c.header('Cache-Control', CACHE_CONTROL);
    c.header('ETag', TRACKER_ETAG);
    c.header('X-Content-Type-Options', 'nosniff');
    // Lets sites load it with `crossorigin` + Subresource Integrity.
    c.header('Access-Control-Allow-Origin', '*');
    if (etagMatches(c.req.header('If-None-Match'), TRACKER_ETAG)) return c.body(null, 304);
    c.header('Content-Type', 'application/javascript; charset=utf-8');
    return c.body(TRACKER_JS);
  });
  return app;
}
