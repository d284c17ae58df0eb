import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { renderTrackerModule, TRACKER_MODULE, TRACKER_SOURCE } from '../../scripts/build-tracker.js';
import { etagMatches, trackerRoutes } from '../../src/tracker/routes.js';

describe('GET /script.js', () => {
  it('serves the tracker as cacheable JavaScript with an ETag', async () => {
    const res = await trackerRoutes().request('/script.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400, stale-while-revalidate=604800');
    expect(res.headers.get('etag')).toMatch(/^"[\w-]{22}"$/);
    const body = await res.text();
    expect(body).toContain('"api/event"');
    expect(body).toContain('sendBeacon');
  });

  it('is at most 2 KB gzipped', async () => {
    const body = await (await trackerRoutes().request('/script.js')).text();
    const gzipped = gzipSync(Buffer.from(body, 'utf8'), { level: 6 }).length;
    expect(gzipped).toBeGreaterThan(500);
    expect(gzipped).toBeLessThanOrEqual(2048);
  });

  it('answers 304 with no body when If-None-Match names the current ETag', async () => {
    const app = trackerRoutes();
    const etag = (await app.request('/script.js')).headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"old", ${etag}`, '*']) {
      const res = await app.request('/script.js', { headers: { 'If-None-Match': header } });
      expect(res.status, header).toBe(304);
      expect(await res.text()).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toContain('max-age=86400');
    }
    const stale = await app.request('/script.js', { headers: { 'If-None-Match': '"something-else"' } });
    expect(stale.status).toBe(200);
  });

  it('answers HEAD with the headers and no body', async () => {
    const res = await trackerRoutes().request('/script.js', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBeTruthy();
    expect(await res.text()).toBe('');
  });
});

describe('etagMatches', () => {
  it('compares weakly and handles lists and absence', () => {
    expect(etagMatches(undefined, '"a"')).toBe(false);
    expect(etagMatches('"b"', '"a"')).toBe(false);
    expect(etagMatches(' "b" , W/"a"', '"a"')).toBe(true);
  });
});

describe('tracker.generated.ts', () => {
  it('is up to date with src/tracker/tracker.js (run `npm run build:tracker`)', async () => {
    const expected = await renderTrackerModule(readFileSync(TRACKER_SOURCE, 'utf8'));
    expect(readFileSync(TRACKER_MODULE, 'utf8')).toBe(expected);
  });
});
