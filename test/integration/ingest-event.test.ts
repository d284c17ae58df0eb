import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from '@upstash/redis';
import { closeHarness, createHarness, listen, type Harness, type TestUser } from '../helpers/harness.js';
import { countryName } from '../../src/ingest/enrich/countries.js';
import { defaultGeoDatabasePath, openMaxmindGeo } from '../../src/ingest/enrich/geo-maxmind.js';
import { excludedIpsKey } from '../../src/ingest/state.js';
import { IngestThrottle } from '../../src/ingest/throttle.js';
import { SESSION_IDLE_MS, sessionCall, sessionId } from '../../src/ingest/enrich/session.js';

const CHROME_MAC =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** A fresh client address per call: throttle windows in Redis outlive a test run by a minute. */
const freshIp = () => `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;
const EXCLUDED_IP = freshIp();

let h: Harness;
let owner: TestUser;
let domain: string;
let site: string;

const post = (body: unknown, headers: Record<string, string> = {}) =>
  h.app.request('/api/event', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': CHROME_MAC, 'X-Forwarded-For': freshIp(), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function rows<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
  const rs = await h.deps.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}

beforeAll(async () => {
  // Redis decides every throttle check here, however loaded the host: a slow answer would let the
  // in-process counters decide some of them (failing open), which counts the hits apart.
  h = await createHarness({ env: { TRUST_PROXY: '1', INGEST_IP_PER_MIN: '5', INGEST_REDIS_TIMEOUT_MS: '10000' } });
  const geoPath = defaultGeoDatabasePath();
  if (!geoPath) throw new Error('the geo database package is not installed');
  h.deps.geo = await openMaxmindGeo(geoPath);
  owner = await h.user('ingest');
  domain = h.domain('ev');
  const created = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Ev', domain } });
  site = (await created.json()).id;
  // Set before the first event: the project's excluded set is cached for a few seconds.
  await (h.deps.redis as Redis).sadd(excludedIpsKey(site), EXCLUDED_IP);
});
afterAll(closeHarness);

describe('POST /api/event: malformed input', () => {
  const base = () => ({ site, kind: 'pageview', url: `https://${domain}/` });
  const cases: [string, () => unknown, number, RegExp][] = [
    ['non-JSON', () => 'not json {', 400, /JSON/],
    ['a JSON array', () => [1, 2], 400, /^body must be a JSON object$/],
    ['site of the wrong type', () => ({ ...base(), site: 42 }), 400, /site/],
    ['url of the wrong type', () => ({ ...base(), url: 7 }), 400, /url/],
    ['missing url', () => ({ site, kind: 'pageview' }), 400, /^url is required$/],
    ['an empty object', () => ({}), 400, /^site is required$/],
    ['unknown kind', () => ({ ...base(), kind: 'click' }), 400, /kind must be one of/],
    ['data: URL', () => ({ ...base(), url: 'data:text/html,<b>x</b>' }), 400, /http\(s\) URL/],
    ['relative URL', () => ({ ...base(), url: '/about' }), 400, /http\(s\) URL/],
    ['3 000-character path', () => ({ ...base(), url: `https://${domain}/${'a'.repeat(3000)}` }), 400, /path must be at most 2048/],
    ['custom without name', () => ({ ...base(), kind: 'custom' }), 400, /name is required/],
    ['name over 120 characters', () => ({ ...base(), kind: 'custom', name: 'n'.repeat(121) }), 400, /name must be at most 120/],
    ['amount without currency', () => ({ ...base(), kind: 'transaction', name: 'Order', amountCents: 100 }), 400, /currency is required/],
    ['lowercase currency', () => ({ ...base(), kind: 'transaction', name: 'Order', amountCents: 100, currency: 'usd' }), 400, /ISO 4217/],
    ['currency not in ISO 4217', () => ({ ...base(), kind: 'transaction', name: 'Order', amountCents: 100, currency: 'XYZ' }), 400, /ISO 4217/],
    ['fractional amount', () => ({ ...base(), kind: 'transaction', name: 'Order', amountCents: 1.5, currency: 'EUR' }), 400, /amountCents/],
    ['negative duration', () => ({ ...base(), kind: 'leave', durationMs: -5 }), 400, /durationMs must be ≥ 0/],
    ['negative vital', () => ({ ...base(), kind: 'vitals', vitals: { lcp: -1 } }), 400, /vitals.lcp/],
    ['nested props', () => ({ ...base(), kind: 'custom', name: 'x', props: { a: { b: 1 } } }), 400, /props/],
    ['31 props', () => ({ ...base(), kind: 'custom', name: 'x', props: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, i])) }), 400, /at most 30/],
  ];
  it.each(cases)('%s', async (_label, body, status, message) => {
    const res = await post(body());
    expect(res.status).toBe(status);
    const json = await res.json();
    expect(json.error).toMatch(message);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('10 000-character path: the body is over 8 KB, so 413 before any field is read', async () => {
    const res = await post({ site, kind: 'pageview', url: `https://${domain}/${'p'.repeat(10_000)}` });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toMatch(/at most 8192 bytes/);
  });

  it('a 9 KB body → 413, by Content-Length and by the bytes actually sent', async () => {
    const big = JSON.stringify({ site, kind: 'custom', name: 'x', url: `https://${domain}/`, props: { blob: 'x'.repeat(900) }, pad: 'y'.repeat(9 * 1024) });
    const declared = await post(big);
    expect(declared.status).toBe(413);
    expect((await declared.json()).error).toMatch(/at most 8192 bytes/);
    // A chunked body has no Content-Length: the reader stops at the limit.
    const stream = new ReadableStream({
      start(ctl) {
        ctl.enqueue(new TextEncoder().encode(big));
        ctl.close();
      },
    });
    const chunked = await h.app.request('/api/event', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
  });
});

describe('POST /api/event: dropped but well-formed → 202 with a reason', () => {
  it('unknown site', async () => {
    const res = await post({ site: 'prj_does_not_exist', kind: 'pageview', url: `https://${domain}/` });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-sightline-dropped')).toBe('unknown-site');
  });

  it('foreign host (a look-alike domain is not a subdomain)', async () => {
    for (const url of ['https://evil.example.org/', `https://not${domain}/`]) {
      const res = await post({ site, kind: 'pageview', url });
      expect(res.status).toBe(202);
      expect(res.headers.get('x-sightline-dropped')).toBe('foreign-host');
    }
  });

  it('bot: dropped from events and recorded in bot_hits', async () => {
    const res = await post({ site, kind: 'pageview', url: `https://${domain}/robots-page` }, { 'User-Agent': GOOGLEBOT, 'X-Forwarded-For': freshIp() });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-sightline-dropped')).toBe('bot');
    await h.deps.sink.flush();
    const bots = await rows<{ bot_slug: string; category: string; verified: number; path: string }>(
      'SELECT bot_slug, category, verified, path FROM bot_hits WHERE project_id = {id:String}',
      { id: site },
    );
    expect(bots).toEqual([{ bot_slug: expect.stringMatching(/google/i), category: 'indexing', verified: 0, path: '/robots-page' }]);
    const events = await rows('SELECT 1 FROM events WHERE project_id = {id:String} AND path = {p:String}', { id: site, p: '/robots-page' });
    expect(events).toHaveLength(0);
  });

  it('excluded IP', async () => {
    // TRUST_PROXY=1: the rightmost entry is the one our proxy wrote; the left one is the client's own text.
    const res = await post({ site, kind: 'pageview', url: `https://${domain}/` }, { 'X-Forwarded-For': `10.0.0.1, ${EXCLUDED_IP}` });
    expect(res.status).toBe(202);
    expect(res.headers.get('x-sightline-dropped')).toBe('excluded-ip');
  });

  it('throttled per IP (INGEST_IP_PER_MIN=5 here)', async () => {
    // The window is a clock minute: an attempt that crossed one proves nothing either way and is
    // repeated once with a fresh address.
    let reasons: (string | null)[] = [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      reasons = [];
      const ip = freshIp();
      const minute = Math.floor(Date.now() / 60_000);
      for (let i = 0; i < 7; i++) {
        const res = await post({ site, kind: 'pageview', url: `https://${domain}/t${i}` }, { 'X-Forwarded-For': ip });
        expect(res.status).toBe(202);
        reasons.push(res.headers.get('x-sightline-dropped'));
      }
      if (Math.floor(Date.now() / 60_000) === minute) break;
    }
    expect(reasons.slice(0, 5)).toEqual([null, null, null, null, null]);
    expect(reasons.slice(5)).toEqual(['throttled', 'throttled']);
  });
});

describe('POST /api/event: accepted events', () => {
  it('answers the CORS preflight', async () => {
    const res = await h.app.request('/api/event', {
      method: 'OPTIONS',
      headers: { Origin: 'https://anywhere.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
  });

  it('stores an enriched pageview (text/plain as sendBeacon sends it) and marks the install seen', async () => {
    const url = `https://blog.${domain}/post/1?utm_source=newsletter&utm_medium=email&utm_campaign=spring#top`;
    const res = await post(
      { site, kind: 'pageview', url, referrer: 'https://www.google.com/search?q=x', screenWidth: 390 },
      { 'Content-Type': 'text/plain;charset=UTF-8', 'User-Agent': IPHONE, 'X-Forwarded-For': '8.8.8.8', Origin: `https://${domain}` },
    );
    expect(res.status).toBe(202);
    expect(res.headers.get('x-sightline-dropped')).toBeNull();
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    await h.deps.sink.flush();
    const [row] = await rows<Record<string, unknown>>(
      `SELECT kind, hostname, path, referrer_source, utm_source, utm_medium, utm_campaign, browser, os, device,
              country_code, country_name, screen_width, visitor_id, session_id,
              toUnixTimestamp(session_floor) * 1000 AS floor_ms, toUnixTimestamp64Milli(ts) AS ts_ms
       FROM events WHERE project_id = {id:String} AND path LIKE '/post/1%'`,
      { id: site },
    );
    expect(row).toMatchObject({
      kind: 'pageview',
      hostname: `blog.${domain}`,
      path: '/post/1#top',
      referrer_source: 'google.com',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'spring',
      browser: 'Safari',
      os: 'iOS',
      device: 'Mobile',
      country_code: 'US',
      country_name: countryName('US'),
      screen_width: 390,
    });
    expect(row.visitor_id).not.toBe('0');
    expect(row.session_id).not.toBe('0');
    // The session's floor: its first event's time less the idle time, never after any of its events.
    expect(Number(row.floor_ms)).toBeGreaterThan(0);
    expect(Number(row.floor_ms)).toBeLessThanOrEqual(Number(row.ts_ms) - SESSION_IDLE_MS);
    const detail = await (await h.call('GET', `/api/v1/projects/${domain}`, { token: owner.readKey })).json();
    expect(detail.installationSeenAt).toEqual(expect.any(String));
  });

  it('stores custom, transaction, leave and vitals fields', async () => {
    const ip = { 'X-Forwarded-For': freshIp() };
    const url = `https://${domain}/checkout`;
    expect((await post({ site, kind: 'custom', url, name: 'Signup', props: { plan: 'pro', seats: 3, trial: true } }, ip)).status).toBe(202);
    expect((await post({ site, kind: 'transaction', url, name: 'Order', amountCents: 1999, currency: 'EUR' }, ip)).status).toBe(202);
    expect((await post({ site, kind: 'leave', url, durationMs: 4200 }, ip)).status).toBe(202);
    expect((await post({ site, kind: 'vitals', url, vitals: { lcp: 1200, cls: 0.05, ttfb: 80 } }, { 'X-Forwarded-For': freshIp() })).status).toBe(202);
    await h.deps.sink.flush();
    const got = await rows<Record<string, unknown>>(
      `SELECT kind, event_name, props, amount_cents, currency, duration_ms, lcp, cls, ttfb, inp
       FROM events WHERE project_id = {id:String} AND path = '/checkout' ORDER BY kind`,
      { id: site },
    );
    expect(got).toEqual([
      expect.objectContaining({ kind: 'leave', duration_ms: 4200 }),
      expect.objectContaining({ kind: 'custom', event_name: 'Signup', props: { plan: 'pro', seats: '3', trial: 'true' } }),
      expect.objectContaining({ kind: 'transaction', event_name: 'Order', amount_cents: '1999', currency: 'EUR' }),
      expect.objectContaining({ kind: 'vitals', lcp: 1200, cls: 0.05, ttfb: 80, inp: null }),
    ]);
  });

  it('uses the socket address without TRUST_PROXY, over real HTTP', async () => {
    const plain = await createHarness();
    const server = await listen(plain.app);
    try {
      await (h.deps.redis as Redis).sadd(excludedIpsKey(site), '127.0.0.1');
      // The forged header is ignored: the request comes from 127.0.0.1, which is excluded.
      const res = await fetch(`${server.url}/api/event`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', 'X-Forwarded-For': '8.8.4.4' },
        body: JSON.stringify({ site, kind: 'pageview', url: `https://${domain}/` }),
      });
      expect(res.status).toBe(202);
      expect(res.headers.get('x-sightline-dropped')).toBe('excluded-ip');
    } finally {
      await server.close();
    }
  });
});

describe('ingest throttle', () => {
  it('looks the session up in the same Redis call only when the event passes', async () => {
    const redis = h.deps.redis as Redis;
    const throttle = new IngestThrottle(redis, { projectPerSec: 1000, ipPerMin: 2 });
    const project = `thr-${Date.now()}`;
    const ip = freshIp();
    const now = Date.now();
    const first = await throttle.check(project, ip, sessionCall(project, 'v1', now));
    expect(first.allowed).toBe(true);
    expect(first.session).toEqual({ id: expect.stringMatching(/^\d+$/), floorMs: now - SESSION_IDLE_MS });
    // The standalone session script sees the same session (same key and value format).
    expect(await sessionId(redis, project, 'v1', now + 1000)).toEqual(first.session);
    const second = await throttle.check(project, ip, sessionCall(project, 'v2', now));
    expect(second.allowed).toBe(true);
    // Third event of the IP this minute: over the limit, so no session is started for v3.
    expect(await throttle.check(project, ip, sessionCall(project, 'v3', now))).toEqual({ allowed: false });
    expect(await redis.exists(`sess:${project}:v3`)).toBe(0);
    expect(await redis.exists(`sess:${project}:v2`)).toBe(1);
  });

  it('sends the checks of one event-loop turn in one call, with the same answers', async () => {
    const redis = h.deps.redis as Redis;
    let calls = 0;
    const counting = new Proxy(redis, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop === 'evalsha' || prop === 'eval') return (...args: unknown[]) => (calls++, (value as (...a: unknown[]) => unknown).apply(target, args));
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const throttle = new IngestThrottle(counting, { projectPerSec: 1000, ipPerMin: 20 });
    const project = `batch-${Date.now()}`;
    for (;;) {
      const minute = Math.floor(Date.now() / 60_000);
      const ip = freshIp();
      const now = Date.now();
      calls = 0;
      // 30 events of one IP (limit 20), from 15 visitors seen twice each, all in one turn.
      const verdicts = await Promise.all(Array.from({ length: 30 }, (_, i) => throttle.check(project, ip, sessionCall(project, `${ip}-v${i % 15}`, now))));
      if (Math.floor(Date.now() / 60_000) !== minute) continue;
      expect(calls).toBe(1);
      expect(verdicts.map((v) => v.allowed)).toEqual(Array.from({ length: 30 }, (_, i) => i < 20));
      expect(verdicts.slice(20)).toEqual(Array.from({ length: 10 }, () => ({ allowed: false })));
      // A visitor's second event in the batch continues the session its first one started.
      for (let v = 0; v < 5; v++) expect(verdicts[v + 15]!.session?.id).toBe(verdicts[v]!.session?.id);
      expect(new Set(verdicts.slice(0, 15).map((v) => v.session?.id)).size).toBe(15);
      // Same windows and session keys as single calls use: the next event of the IP is refused.
      expect(await throttle.check(project, ip)).toEqual({ allowed: false });
      expect((await sessionId(redis, project, `${ip}-v3`, now + 1000)).id).toBe(verdicts[3]!.session?.id);
      break;
    }
  });

  it('fails open to per-process windows when Redis does not answer in time', async () => {
    // Every command (SCRIPT LOAD, EVALSHA, EVAL) hangs, as a stuck Redis would.
    const hanging = new Proxy({}, { get: () => () => new Promise(() => {}) }) as unknown as Redis;
    const throttle = new IngestThrottle(hanging, { projectPerSec: 1000, ipPerMin: 2 }, { redisTimeoutMs: 20 });
    const started = Date.now();
    expect(await throttle.allow('p', '1.1.1.1')).toBe(true);
    expect(Date.now() - started).toBeLessThan(500);
    expect(throttle.degraded).toBe(true);
    expect(await throttle.allow('p', '1.1.1.1')).toBe(true);
    expect(await throttle.allow('p', '1.1.1.1')).toBe(false);
    expect(await throttle.allow('p', '2.2.2.2')).toBe(true);
  });
});
