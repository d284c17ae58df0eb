import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARED_REPORTS } from '../../src/dashboard/share-api.js';
import { JS_NAME } from '../../src/dashboard/assets.generated.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { newProject } from '../helpers/report-fixtures.js';

let h: Harness;
let owner: TestUser;
let site: { domain: string; id: string };

async function importEvents(domain: string, token: string) {
  const at = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
  const lines = [
    { timestamp: at(30), kind: 'pageview', visitorId: 'a', sessionId: 'a1', url: `https://${domain}/`, countryCode: 'NL', city: 'Amsterdam' },
    { timestamp: at(20), kind: 'pageview', visitorId: 'b', sessionId: 'b1', url: `https://${domain}/docs` },
    { timestamp: at(10), kind: 'pageview', visitorId: 'b', sessionId: 'b1', url: `https://${domain}/docs` },
  ];
  const res = await h.call('POST', `/api/v1/projects/${domain}/import`, { token, body: lines.map((l) => JSON.stringify(l)).join('\n'), headers: { 'Content-Type': 'application/x-ndjson' } });
  expect(await res.json()).toMatchObject({ imported: 3 });
}

beforeAll(async () => {
  h = await createHarness();
  owner = await h.user('owner');
  site = await newProject(h, owner);
  await importEvents(site.domain, owner.writeKey);
});
afterAll(closeHarness);

describe('dashboard pages', () => {
  it('serves the app shell at / with its hashed assets and a strict CSP', async () => {
    const res = await h.call('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain(`<script type="module" src="/assets/${JS_NAME}"></script>`);
    expect(html).toContain('data-base="http://localhost"');
    expect((await h.call('GET', `/assets/${JS_NAME}`)).status).toBe(200);
  });

  it('uses PUBLIC_URL as the base when configured', async () => {
    const other = await createHarness({ env: { PUBLIC_URL: 'https://stats.example.net/' } });
    expect(await (await other.call('GET', '/')).text()).toContain('data-base="https://stats.example.net"');
  });
});

describe('public stats (/share and /api/share)', () => {
  it('answers 404 while public stats are off, and for unknown domains', async () => {
    const page = await h.call('GET', `/share/${site.domain}`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain('Page not found');
    expect((await h.call('GET', `/api/share/${site.domain}/stats`)).status).toBe(404);
    expect(await (await h.call('GET', `/api/share/${site.domain}`)).json()).toEqual({ error: 'Project not found' });
    expect((await h.call('GET', '/share/nothing-here.example')).status).toBe(404);
  });

  it('serves the page and the registry reports once enabled, equal to the signed-in answers', async () => {
    await h.call('PATCH', `/api/v1/projects/${site.domain}`, { token: owner.writeKey, body: { publicStatsEnabled: true, brandColor: '#0f766e' } });
    const page = await h.call('GET', `/share/${site.domain.toUpperCase()}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`data-share="${site.domain}"`);
    expect(html).toContain('data-brand="#0f766e"');

    expect(await (await h.call('GET', `/api/share/${site.domain}`)).json()).toEqual({ name: 'Reports', domain: site.domain, timeZone: 'UTC', brandColor: '#0f766e', icon: null });
    for (const name of ['stats', 'pages', 'countries', 'timeseries', 'devices']) {
      const shared = await h.call('GET', `/api/share/${site.domain}/${name}?period=7d`);
      expect(shared.status, name).toBe(200);
      const signedIn = await h.call('GET', `/api/v1/projects/${site.domain}/${name}?period=7d`, { token: owner.readKey });
      // Periods end now: the two answers differ only in `to`, the instant each was asked at.
      const [a, b] = [(await shared.json()) as { to: string }, (await signedIn.json()) as { to: string }];
      expect(Math.abs(Date.parse(a.to) - Date.parse(b.to)), name).toBeLessThan(60_000);
      expect({ ...a, to: undefined }, name).toEqual({ ...b, to: undefined });
    }
    const stats = (await (await h.call('GET', `/api/share/${site.domain}/stats?period=24h`)).json()) as { pageviews: number; visitors: number };
    expect(stats).toMatchObject({ pageviews: 3, visitors: 2 });
  });

  it('passes filters, comparison and custom ranges through, and serves breakdown and realtime as the signed-in API does', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const queries = [
      `stats?period=7d&filters=${encodeURIComponent('page==/docs')}&compare=previous_period`,
      `pages?period=custom&from=${today}&to=${today}&compare=year_over_year`,
      `timeseries?period=all&filters=${encodeURIComponent('country==NL')}`,
      `breakdown?period=7d&dimension=page&metrics=visitors,pageviews&filters=${encodeURIComponent('page~=doc')}&compare=previous_period`,
      `breakdown?period=7d&dimension=country&limit=1&offset=0`,
    ];
    for (const q of queries) {
      const shared = await h.call('GET', `/api/share/${site.domain}/${q}`);
      expect(shared.status, q).toBe(200);
      const signedIn = await h.call('GET', `/api/v1/projects/${site.domain}/${q}`, { token: owner.readKey });
      // Periods end now: the answers differ only in the `to` instants (the period's and the comparison's).
      const untimed = (x: { to?: string; comparison?: { to?: string } }) => ({ ...x, to: undefined, ...(x.comparison ? { comparison: { ...x.comparison, to: undefined } } : {}) });
      expect(untimed((await shared.json()) as object), q).toEqual(untimed((await signedIn.json()) as object));
    }
    const docs = (await (await h.call('GET', `/api/share/${site.domain}/breakdown?period=7d&dimension=page&metrics=visitors,pageviews&filters=${encodeURIComponent('page~=doc')}`)).json()) as { data: unknown[] };
    expect(docs.data).toEqual([{ page: '/docs', visitors: 1, pageviews: 2 }]);
    const realtime = await h.call('GET', `/api/share/${site.domain}/realtime`);
    expect(realtime.status).toBe(200);
    expect(Object.keys((await realtime.json()) as object).sort()).toEqual(['pages', 'pageviews', 'sources', 'visitors']);
    // Bad input answers the same 400 as signed in; POST query stays private.
    const bad = await h.call('GET', `/api/share/${site.domain}/breakdown?dimension=nope`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^dimension must be one of/);
    expect((await h.call('POST', `/api/share/${site.domain}/query`, { body: { metrics: ['visitors'] } })).status).toBe(404);
  });

  it('validates the query like the signed-in routes', async () => {
    const res = await h.call('GET', `/api/share/${site.domain}/pages?period=forever`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^period must be one of: 24h, today, 7d/);
  });

  it('keeps per-visitor detail and funnels private', async () => {
    expect(SHARED_REPORTS).not.toContain('visitors');
    expect((await h.call('GET', `/api/share/${site.domain}/visitors`)).status).toBe(404);
    expect((await h.call('GET', `/api/share/${site.domain}/funnels`)).status).toBe(404);
  });

  it('serves only what the page shows: goal progress without definitions, no bot paths, no per-page vitals', async () => {
    const goal = await h.call('POST', `/api/v1/projects/${site.domain}/goals`, { token: owner.writeKey, body: { name: 'Reached docs', type: 'pageview', value: '/internal-secret*', target: 10 } });
    expect(goal.status).toBe(201);
    const { id } = (await goal.json()) as { id: string };
    const shared = await h.call('GET', `/api/share/${site.domain}/goals?period=7d`);
    expect(shared.status).toBe(200);
    const text = await shared.text();
    expect(text).not.toContain('/internal-secret');
    expect(text).not.toContain(id);
    const body = JSON.parse(text) as { goals: Record<string, unknown>[] };
    expect(body.goals).toEqual([{ name: 'Reached docs', target: 10, format: 'number', current: 0, conversionRate: 0, currency: null }]);
    expect(Object.keys(body).sort()).toEqual(['from', 'goals', 'period', 'to']);

    const bots = (await (await h.call('GET', `/api/share/${site.domain}/bots?period=7d`)).json()) as { data: Record<string, unknown> };
    expect(Object.keys(bots.data).sort()).toEqual(['topBots', 'totals']);
    const perf = (await (await h.call('GET', `/api/share/${site.domain}/performance?period=7d`)).json()) as Record<string, unknown>;
    expect(Object.keys(perf).sort()).toEqual(['from', 'overall', 'period', 'to']);
    // The page draws browsers and OS from the devices report; members are never public.
    for (const path of ['browsers', 'os', 'members', 'funnels', 'visitors']) expect((await h.call('GET', `/api/share/${site.domain}/${path}`)).status, path).toBe(404);
    // CSV is a signed-in feature: the share API answers JSON whatever the Accept header.
    const csv = await h.call('GET', `/api/share/${site.domain}/goals?period=7d`, { headers: { Accept: 'text/csv' } });
    expect(csv.headers.get('content-type')).toContain('application/json');
    expect(await csv.text()).not.toContain('/internal-secret');
  });

  it('goes dark again when public stats are turned off', async () => {
    await h.call('PATCH', `/api/v1/projects/${site.domain}`, { token: owner.writeKey, body: { publicStatsEnabled: false } });
    expect((await h.call('GET', `/share/${site.domain}`)).status).toBe(404);
    expect((await h.call('GET', `/api/share/${site.domain}/stats`)).status).toBe(404);
    expect((await h.call('GET', `/api/share/${site.domain}/breakdown?dimension=page`)).status).toBe(404);
    expect((await h.call('GET', `/api/share/${site.domain}/realtime`)).status).toBe(404);
  });
});

describe('project members API', () => {
  const members = (token: string, method = 'GET', body?: unknown) => h.call(method, `/api/v1/projects/${site.domain}/members`, { token, body });

  it('lets the owner add, list, re-role and remove members by email', async () => {
    const friend = await h.user('friend');
    const added = await members(owner.writeKey, 'POST', { email: friend.email.toUpperCase(), role: 'member' });
    expect(added.status).toBe(202);
    expect(await added.json()).toEqual({ email: friend.email, role: 'member' });
    expect((await h.call('GET', `/api/v1/projects/${site.domain}/pages`, { token: friend.readKey })).status).toBe(200);
    // A member cannot manage members: the project 404.
    expect((await members(friend.writeKey)).status).toBe(404);
    expect((await members(owner.writeKey, 'POST', { email: friend.email, role: 'admin' })).status).toBe(202);
    const list = (await (await members(owner.readKey)).json()) as { members: { email: string; role: string }[] };
    expect(list.members.map((m) => [m.email, m.role])).toEqual([[owner.email, 'owner'], [friend.email, 'admin']]);
    // Admins see reports but still not members.
    expect((await members(friend.writeKey, 'POST', { email: owner.email, role: 'member' })).status).toBe(404);
    expect((await members(owner.writeKey, 'DELETE', { email: friend.email })).status).toBe(200);
    expect((await h.call('GET', `/api/v1/projects/${site.domain}`, { token: friend.readKey })).status).toBe(404);
    expect((await members(owner.writeKey, 'DELETE', { email: friend.email })).status).toBe(404);
  });

  it('refuses the owner, bad bodies and read-only keys', async () => {
    expect(await (await members(owner.writeKey, 'POST', { email: owner.email, role: 'admin' })).json()).toEqual({ error: 'The owner cannot be added or removed as a member' });
    expect((await members(owner.writeKey, 'DELETE', { email: owner.email })).status).toBe(400);
    expect(await (await members(owner.writeKey, 'POST', { email: 'x@y.example', role: 'owner' })).json()).toEqual({ error: 'role must be one of: admin, member' });
    expect(await (await members(owner.writeKey, 'POST', { email: 'not-an-email', role: 'admin' })).json()).toEqual({ error: 'email must be an email address' });
    expect((await members(owner.readKey, 'POST', { email: 'x@y.example', role: 'admin' })).status).toBe(403);
    expect((await h.call('GET', `/api/v1/projects/${site.domain}/members`)).status).toBe(401);
  });
});
