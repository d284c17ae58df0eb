import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANALYTICS_TABLES } from '../../src/analytics-tables.js';
import { withQuery } from '../../src/adapters/clickhouse.js';
import { createApp } from '../../src/app.js';
import { createServices } from '../../src/services.js';
import { hashToUInt64 } from '../../src/ingest/enrich/visitor.js';
import { importSessionId } from '../../src/ingest/import-chunk.js';
import { closeHarness, countEvents, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const GOOGLE_CRAWLER_IP = '66.249.66.1';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0';

let h: Harness;
let owner: TestUser;

async function rows<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
  const rs = await h.deps.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}
const scalar = async (query: string, params: Record<string, unknown>) => Number((await rows<{ n: string }>(query, params))[0].n);

async function project(label: string): Promise<{ domain: string; id: string }> {
  const domain = h.domain(label);
  const res = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: label, domain } });
  return { domain, id: (await res.json()).id };
}

const importFile = (domain: string, body: string, headers: Record<string, string> = {}, token = owner.writeKey) =>
  h.app.request(`/api/v1/projects/${domain}/import`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/x-ndjson', ...headers },
    body,
  });

const line = (o: Record<string, unknown>) => JSON.stringify(o);

beforeAll(async () => {
  h = await createHarness();
  owner = await h.user('api');
});
afterAll(closeHarness);

describe('POST /api/v1/projects/{domain}/hits', () => {
  it('records a verified Googlebot in bot_hits and a human as a pageview', async () => {
    const p = await project('hits');
    const res = await h.call('POST', `/api/v1/projects/${p.domain}/hits`, {
      token: owner.writeKey,
      body: [
        { path: '/docs', userAgent: GOOGLEBOT, ip: GOOGLE_CRAWLER_IP, status: 200 },
        { path: '/fake', userAgent: GOOGLEBOT, ip: '203.0.113.5', status: 404 },
        { ts: '2024-05-01T12:00:00Z', path: '/pricing?x=1', userAgent: FIREFOX, ip: '8.8.8.8', referrer: 'https://news.ycombinator.com/item?id=1' },
        { path: 'no-slash', userAgent: FIREFOX, ip: '8.8.8.8' },
        { path: `/${'x'.repeat(10_000)}`, userAgent: FIREFOX, ip: '8.8.8.8' },
        { path: '/', userAgent: FIREFOX, ip: 'not-an-ip' },
      ],
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ accepted: 1, bots: 2, rejected: 3 });
    expect(body.errors).toEqual([
      { index: 3, error: expect.stringMatching(/path must start with/) },
      { index: 4, error: expect.stringMatching(/path must be at most 2048/) },
      { index: 5, error: expect.stringMatching(/ip must be/) },
    ]);
    await h.deps.sink.flush();
    const bots = await rows<Record<string, unknown>>(
      'SELECT path, verified, category, status FROM bot_hits WHERE project_id = {id:String} ORDER BY path',
      { id: p.id },
    );
    expect(bots).toEqual([
      { path: '/docs', verified: 1, category: 'indexing', status: 200 },
      { path: '/fake', verified: 0, category: 'indexing', status: 404 },
    ]);
    const events = await rows<Record<string, unknown>>(
      'SELECT kind, ts, hostname, path, browser, os, device, country_code FROM events WHERE project_id = {id:String}',
      { id: p.id },
    );
    expect(events).toEqual([
      { kind: 'pageview', ts: '2024-05-01 12:00:00.000', hostname: p.domain, path: '/pricing', browser: 'Firefox', os: 'Windows', device: 'Desktop', country_code: expect.any(String) },
    ]);
  });

  it('refuses a body that is not an array, over 1000 hits, or a read-only key', async () => {
    const p = await project('hits-bad');
    const notArray = await h.call('POST', `/api/v1/projects/${p.domain}/hits`, { token: owner.writeKey, body: { path: '/' } });
    expect(notArray.status).toBe(400);
    expect((await notArray.json()).error).toMatch(/array/);
    const many = Array.from({ length: 1001 }, () => ({ path: '/', userAgent: FIREFOX, ip: '8.8.8.8' }));
    const tooMany = await h.call('POST', `/api/v1/projects/${p.domain}/hits`, { token: owner.writeKey, body: many });
    expect(tooMany.status).toBe(400);
    expect((await tooMany.json()).error).toMatch(/at most 1000/);
    const readOnly = await h.call('POST', `/api/v1/projects/${p.domain}/hits`, { token: owner.readKey, body: [] });
    expect(readOnly.status).toBe(403);
    const stranger = await h.user('stranger');
    const hidden = await h.call('POST', `/api/v1/projects/${p.domain}/hits`, { token: stranger.writeKey, body: [] });
    expect(hidden.status).toBe(404);
  });
});

describe('POST /api/v1/projects/{domain}/import', () => {
  it('answers a viewer first: while a read is being answered, the import waits for it (for a bounded time)', async () => {
    const p = await project('imp-reads');
    const file = Array.from({ length: 50 }, (_, i) => line({ timestamp: '2024-03-01T10:00:00Z', kind: 'pageview', visitorId: `v${i}`, sessionId: `s${i}`, url: `https://${p.domain}/` })).join('\n');
    const reads = h.deps.readsInFlight!;
    // A read in flight, as the app counts a report request while it is answered.
    const endRead = reads.begin();
    const started = performance.now();
    let answeredAt = 0;
    const importing = Promise.resolve(importFile(p.domain, file)).then((res) => {
      answeredAt = performance.now();
      return res;
    });
    await new Promise((r) => setTimeout(r, 400));
    expect(answeredAt).toBe(0);
    expect(await countEvents(h, p.id)).toBe(0);
    endRead();
    const res = await importing;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ imported: 50, rejected: 0, errors: [] });
    expect(answeredAt - started).toBeGreaterThanOrEqual(400);
    expect(await countEvents(h, p.id)).toBe(50);
  });

  it('counts a report request as a read while the app answers it', async () => {
    const p = await project('imp-counted');
    const reads = h.deps.readsInFlight!;
    const seen: number[] = [];
    const clickhouse = withQuery(h.deps.clickhouse, (params) => {
      seen.push(reads.count);
      return h.deps.clickhouse.query(params);
    });
    const deps = { ...h.deps, clickhouse, answers: undefined };
    const app = createApp(deps, createServices(deps));
    const res = await app.request(`/api/v1/projects/${p.domain}/pages?period=30d`, { headers: { Authorization: `Bearer ${owner.readKey}` } });
    expect(res.status).toBe(200);
    expect(seen.length).toBeGreaterThan(0);
    expect(Math.min(...seen)).toBe(1);
    expect(reads.count).toBe(0);
  });

  it('goes on after the bound when a read is not answered', async () => {
    const p = await project('imp-long-read');
    const endRead = h.deps.readsInFlight!.begin();
    try {
      const res = await importFile(p.domain, line({ timestamp: '2024-03-01T10:00:00Z', kind: 'pageview', visitorId: 'v', sessionId: 's', url: `https://${p.domain}/` }));
      expect(await res.json()).toEqual({ imported: 1, rejected: 0, errors: [] });
    } finally {
      endRead();
    }
  });

  it('keeps good lines, reports bad ones by line number, and maps the same ids to the same values', async () => {
    const p = await project('imp');
    const url = `https://${p.domain}/a?utm_source=mail`;
    const file = [
      line({ timestamp: '2024-03-01T10:00:00Z', kind: 'pageview', visitorId: 'alice', sessionId: 's1', url, referrer: 'https://duckduckgo.com/', countryCode: 'DE', city: 'Berlin', browser: 'Firefox', os: 'Linux', device: 'Desktop' }),
      '{not json',
      line({ timestamp: '2024-03-01T10:01:00Z', kind: 'pageview', visitorId: 'alice', sessionId: 's1', url: 'data:text/plain,x' }),
      '',
      line({ timestamp: 'yesterday', kind: 'pageview', visitorId: 'bob', sessionId: 's2', url }),
      line({ timestamp: '2024-03-01T10:02:00+01:00', kind: 'transaction', visitorId: 'alice', sessionId: 's1', url, name: 'Order', amountCents: 500, currency: 'EUR' }),
      line({ timestamp: '2024-03-01T10:03:00Z', kind: 'transaction', visitorId: 'bob', sessionId: 's2', url, name: 'Order', amountCents: 500 }),
      line({ timestamp: '2024-03-01T10:04:00Z', kind: 'leave', visitorId: 'bob', sessionId: 's2', url, durationMs: 3000, countryCode: 'de' }),
      line({ timestamp: '2024-03-01T10:05:00Z', kind: 'pageview', visitorId: 'bob', sessionId: 's2', url: `https://${p.domain}/b` }),
    ].join('\n');
    const res = await importFile(p.domain, file);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      imported: 3,
      rejected: 5,
      errors: [
        { line: 2, error: 'line is not valid JSON' },
        { line: 3, error: expect.stringMatching(/url must be an absolute http\(s\) URL/) },
        { line: 5, error: expect.stringMatching(/timestamp/) },
        { line: 7, error: 'currency is required with amountCents' },
        { line: 8, error: expect.stringMatching(/countryCode/) },
      ],
    });
    const got = await rows<Record<string, unknown>>(
      `SELECT ts, kind, visitor_id, session_id, path, referrer_source, utm_source, country_code, country_name, city, browser, amount_cents, currency,
              toUnixTimestamp(session_floor) AS session_floor
       FROM events WHERE project_id = {id:String} ORDER BY ts`,
      { id: p.id },
    );
    expect(got).toEqual([
      expect.objectContaining({ ts: '2024-03-01 09:02:00.000', kind: 'transaction', visitor_id: hashToUInt64('alice'), amount_cents: '500', currency: 'EUR' }),
      expect.objectContaining({ ts: '2024-03-01 10:00:00.000', kind: 'pageview', visitor_id: hashToUInt64('alice'), session_id: importSessionId('alice', 's1').toString(), path: '/a', referrer_source: 'duckduckgo.com', utm_source: 'mail', country_code: 'DE', country_name: 'Germany', city: 'Berlin', browser: 'Firefox' }),
      expect.objectContaining({ ts: '2024-03-01 10:05:00.000', kind: 'pageview', visitor_id: hashToUInt64('bob'), session_id: importSessionId('bob', 's2').toString(), path: '/b', country_code: '', browser: '' }),
    ]);
    expect(got[0].session_id).toBe(got[1].session_id);
    // An import cannot bound its sessions (README "Visits of closed hours"): no floor.
    expect(got.map((r) => r.session_floor)).toEqual([0, 0, 0]);
  });

  it('a session id is its visitor’s: two visitors’ "s1" are two visits, one visitor’s "s1" one visit across imports', async () => {
    const p = await project('imp-sessions');
    const view = (visitorId: string, minute: number) =>
      line({ timestamp: `2024-03-01T10:0${minute}:00Z`, kind: 'pageview', visitorId, sessionId: 's1', url: `https://${p.domain}/p${minute}` });
    await importFile(p.domain, [view('alice', 0), view('bob', 1)].join('\n'));
    await importFile(p.domain, [view('alice', 2), view('carol', 3)].join('\n'));
    const visits = await rows<{ visitor_id: string; sessions: string; views: string }>(
      'SELECT visitor_id, uniqExact(session_id) AS sessions, count() AS views FROM events WHERE project_id = {id:String} GROUP BY visitor_id ORDER BY views DESC, visitor_id',
      { id: p.id },
    );
    expect(visits.map((v) => [v.sessions, v.views])).toEqual([['1', '2'], ['1', '1'], ['1', '1']]);
    expect(await scalar('SELECT uniqExact(session_id) AS n FROM events WHERE project_id = {id:String}', { id: p.id })).toBe(3);
    // Visitor "ab" with session "c" is not visitor "a" with session "bc" (the visitor id's length goes first).
    expect(importSessionId('ab', 'c').toString()).not.toBe(importSessionId('a', 'bc').toString());
  });

  it('the same import sent twice with the same batch id stores nothing twice (raw and rollups)', async () => {
    const p = await project('dedupe');
    const file = Array.from({ length: 2500 }, (_, i) =>
      line({ timestamp: new Date(Date.UTC(2024, 4, 1, 0, i)).toISOString(), kind: i % 5 === 4 ? 'leave' : 'pageview', visitorId: `v${i % 97}`, sessionId: `s${i % 300}`, url: `https://${p.domain}/p${i % 20}`, durationMs: 1000 }),
    ).join('\n');
    const totals = async () => ({
      events: await scalar('SELECT count() AS n FROM events WHERE project_id = {id:String}', { id: p.id }),
      statsPageviews: await scalar('SELECT sum(pageviews) AS n FROM stats_15m WHERE project_id = {id:String}', { id: p.id }),
      statsLeaves: await scalar('SELECT sum(leaves) AS n FROM stats_15m WHERE project_id = {id:String}', { id: p.id }),
      pagesPageviews: await scalar('SELECT sum(pageviews) AS n FROM pages_15m WHERE project_id = {id:String}', { id: p.id }),
    });
    const first = await importFile(p.domain, file, { 'X-Import-Batch-Id': 'migration-2024-05' });
    expect(await first.json()).toEqual({ imported: 2500, rejected: 0, errors: [] });
    const once = await totals();
    expect(once).toEqual({ events: 2500, statsPageviews: 2000, statsLeaves: 500, pagesPageviews: 2000 });
    const again = await importFile(p.domain, file, { 'X-Import-Batch-Id': 'migration-2024-05' });
    expect(await again.json()).toEqual({ imported: 2500, rejected: 0, errors: [] });
    expect(await totals()).toEqual(once);
    // Without a batch id a second send is a new import.
    await importFile(p.domain, file);
    expect((await totals()).events).toBe(5000);
  });

  it('refuses another content type and a bad batch id', async () => {
    const p = await project('imp-bad');
    const wrongType = await importFile(p.domain, '{}', { 'Content-Type': 'application/json' });
    expect(wrongType.status).toBe(415);
    expect((await wrongType.json()).error).toMatch(/application\/x-ndjson/);
    const badId = await importFile(p.domain, '', { 'X-Import-Batch-Id': 'has spaces' });
    expect(badId.status).toBe(400);
    const readOnly = await importFile(p.domain, '', {}, owner.readKey);
    expect(readOnly.status).toBe(403);
  });
});

describe('OpenAPI', () => {
  it('documents the ingestion endpoints', async () => {
    const doc = await (await h.app.request('/openapi.json')).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/event', '/api/v1/projects/{domain}/hits', '/api/v1/projects/{domain}/import']),
    );
    expect(doc.paths['/api/event'].post.responses['202']).toBeDefined();
  });
});

describe('project delete', () => {
  it('removes every row; re-creating the domain gives a new id and empty tables', async () => {
    const old = await project('gone');
    const file = Array.from({ length: 50 }, (_, i) =>
      // An hour apart, so some fall on earlier UTC days: the visits of closed hours are kept too (visit_source_parts).
      line({ timestamp: new Date(Date.now() - i * 3_600_000).toISOString(), kind: i % 10 === 0 ? 'custom' : i % 10 === 5 ? 'vitals' : 'pageview', ...(i % 10 === 5 && { vitals: { lcp: 1200 } }), name: 'Signup', visitorId: `v${i}`, sessionId: `s${i}`, url: `https://${old.domain}/x`, countryCode: 'FR', city: 'Paris', browser: 'Chrome', os: 'Android', device: 'Mobile' }),
    ).join('\n');
    expect((await (await importFile(old.domain, file)).json()).imported).toBe(50);
    await h.call('POST', `/api/v1/projects/${old.domain}/hits`, { token: owner.writeKey, body: [{ path: '/b', userAgent: GOOGLEBOT, ip: GOOGLE_CRAWLER_IP }] });
    await h.deps.sink.flush();
    // The reports that keep parts (visits of closed hours, closed days of a period) store them after answering.
    for (const report of ['referrers', 'pages', 'countries', 'cities', 'devices', 'events'])
      expect((await h.call('GET', `/api/v1/projects/${old.domain}/${report}?period=30d`, { token: owner.readKey })).status).toBe(200);
    await h.deps.background!.settled();
    const countAll = async (id: string) => {
      const out: Record<string, number> = {};
      for (const t of ANALYTICS_TABLES) out[t.name] = await scalar('SELECT count() AS n FROM ' + t.name + ' WHERE project_id = {id:String}', { id });
      return out;
    };
    const before = await countAll(old.id);
    for (const t of ANALYTICS_TABLES) expect(before[t.name], t.name).toBeGreaterThan(0);

    const del = await h.call('DELETE', `/api/v1/projects/${old.domain}`, { token: owner.writeKey, body: { confirm: true } });
    expect(await del.json()).toEqual({ ok: true });
    const again = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'again', domain: old.domain } });
    expect(again.status).toBe(201);
    const fresh = (await again.json()).id;
    expect(fresh).not.toBe(old.id);
    const zero = Object.fromEntries(ANALYTICS_TABLES.map((t) => [t.name, 0]));
    expect(await countAll(old.id)).toEqual(zero);
    expect(await countAll(fresh)).toEqual(zero);
  });
});
