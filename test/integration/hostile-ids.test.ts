import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { createServices, type Services } from '../../src/services.js';
import type { Deps } from '../../src/deps.js';
import { s256Challenge } from '../../src/oauth/pkce.js';
import { closeHarness, createHarness, listenAsNode, type Harness, type Listening, type TestUser } from '../helpers/harness.js';
import { keysOf, spyRedis, type RedisCall } from '../helpers/redis-spy.js';

// Every id a request carries (event `site`, `{domain}`, goal and funnel ids, key ids, OAuth
// client ids, codes, tokens, CSRF tokens, export names) is checked against its format before it
// is put into a Redis key: a hostile one is answered exactly as an unknown one, nothing reaches
// Redis with it, nothing is stored under a wrong project id, and nothing answers 5xx. The app
// here runs over a Redis client that records every command it is asked to send.

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const REDIRECT = 'http://127.0.0.1:33418/callback';
/** This file's client address (TRUST_PROXY=1): per-address limits of other test files are not shared. */
const CLIENT_IP = `10.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}.${Math.floor(Math.random() * 250) + 1}`;

let h: Harness;
let app: App;
let services: Services;
let calls: RedisCall[];
let node: Listening;
let owner: TestUser;
let site: string;
let domain: string;
let goalId: string;
let funnelId: string;
let clientId: string;

/** Ids of the `real` one's shape that are not ids: key suffixes, globs, control and unicode text, length. */
const hostile = (real: string) => [
  `${real}:members`,
  `${real}:installed`,
  `${real}:goals`,
  `${real}:excluded-ips`,
  `${real}*`,
  '*',
  '..',
  '#seq',
  real.toUpperCase(),
  `${real} `,
  `${real}\n`,
  `${real}\u0000`,
  `\u0000${real}`,
  `${real.slice(0, -2)}é😀`,
  `${real.slice(0, 4)}${'ü'.repeat(real.length - 4)}`,
  `${real}${'a'.repeat(4000)}`,
];

/** The recorded calls of one request, and what it answered. */
async function traced(run: () => Promise<Response>): Promise<{ res: Response; text: string; calls: RedisCall[] }> {
  const start = calls.length;
  const res = await run();
  const text = await res.text();
  return { res, text, calls: calls.slice(start) };
}

const request = (method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  traced(async () => {
    const headers: Record<string, string> = { 'user-agent': CHROME, 'x-forwarded-for': CLIENT_IP, ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['Content-Type'] ??= 'application/json';
    }
    return app.request(path, { method, headers, body });
  });

/** Calls that are not the credential's own lookups or the rate limiter's counters. */
const beyondAuth = (list: RedisCall[]) =>
  list.filter((c) => {
    const keys = keysOf(c);
    return keys.length === 0 || !keys.every((k) => k === '' || /^(rl:|apikey:|session:|acct:acc_)/.test(k));
  });

/** Calls one of whose arguments holds `text`. */
const mentioning = (list: RedisCall[], text: string) => list.filter((c) => JSON.stringify(c.args).includes(JSON.stringify(text).slice(1, -1)));

beforeAll(async () => {
  // Hundreds of requests of one credential: the limits are not what is tested here.
  const many = '1000000';
  h = await createHarness({ env: { TRUST_PROXY: '1', RATE_LIMIT_API_PER_MIN: many, RATE_LIMIT_EXPORT_PER_MIN: many, RATE_LIMIT_PATCH_PER_MIN: many, RATE_LIMIT_VERIFY_PER_MIN: many } });
  const spy = spyRedis(h.deps.redis);
  calls = spy.calls;
  const deps: Deps = { ...h.deps, redis: spy.redis };
  services = createServices(deps);
  app = createApp(deps, services);
  node = await listenAsNode({ app, services });
  owner = await h.user('hostile');
  domain = h.domain('hostile');
  const created = await request('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: 'Hostile', domain, timeZone: 'UTC' } });
  expect(created.res.status).toBe(201);
  site = JSON.parse(created.text).id;
  const goal = await request('POST', `/api/v1/projects/${domain}/goals`, { token: owner.writeKey, body: { name: 'Signup', type: 'event', value: 'Signup' } });
  goalId = JSON.parse(goal.text).id;
  const funnel = await request('POST', `/api/v1/projects/${domain}/funnels`, {
    token: owner.writeKey,
    body: { name: 'F', steps: [{ type: 'pageview', value: '/' }, { type: 'event', value: 'Signup' }] },
  });
  funnelId = JSON.parse(funnel.text).id;
  // A first event: `project:<id>:installed` then holds a string, which a `site` of
  // `<id>:installed` once read as a project with an undefined domain.
  const first = await request('POST', '/api/event', { body: { site, kind: 'pageview', url: `https://${domain}/` } });
  expect(first.res.status).toBe(202);
  expect(first.res.headers.get('x-sightline-dropped')).toBeNull();
  const registered = await request('POST', '/oauth/register', { body: { client_name: 'Hostile', redirect_uris: [REDIRECT] } });
  clientId = JSON.parse(registered.text).client_id;
});

afterAll(async () => {
  await node?.close();
  await closeHarness();
});

describe('event `site`', () => {
  it('is unknown-site without a single Redis call, on the Hono route and the Node fast path', async () => {
    for (const bad of hostile(site)) {
      for (const url of [`https://${domain}/`, 'https://a.undefined/']) {
        const body = { site: bad, kind: 'pageview', url };
        const hono = await request('POST', '/api/event', { body });
        const fast = await traced(() => fetch(`${node.url}/api/event`, { method: 'POST', headers: { 'user-agent': CHROME, 'x-forwarded-for': CLIENT_IP }, body: JSON.stringify(body) }));
        for (const [path, { res, text, calls: made }] of [['hono', hono], ['node', fast]] as const) {
          const what = `${path} ${JSON.stringify(bad).slice(0, 60)} ${url}`;
          // Longer than the schema's 64 characters is a 400 naming the field, as it was.
          if (bad.length > 64) expect({ status: res.status, text }, what).toEqual({ status: 400, text: '{"error":"site is too long"}' });
          else expect({ status: res.status, dropped: res.headers.get('x-sightline-dropped') }, what).toEqual({ status: 202, dropped: 'unknown-site' });
          expect(made, what).toEqual([]);
        }
      }
    }
  });

  it('stored nothing under an empty or wrong project id', async () => {
    await h.deps.sink.flush();
    const wrong = hostile(site);
    for (const table of ['events', 'bot_hits']) {
      const rs = await h.deps.clickhouse.query({
        query: `SELECT count() AS n FROM ${table} WHERE project_id = '' OR position(project_id, ':') > 0 OR project_id IN {wrong:Array(String)}`,
        query_params: { wrong },
        format: 'JSONEachRow',
      });
      expect(await rs.json(), table).toEqual([{ n: '0' }]);
    }
    const rs = await h.deps.clickhouse.query({ query: 'SELECT count() AS n FROM events WHERE project_id = {site:String}', query_params: { site }, format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ n: '1' }]);
  });
});

describe('`{domain}` in paths', () => {
  const routes = (d: string): [string, string, unknown?][] => {
    const p = `/api/v1/projects/${encodeURIComponent(d)}`;
    return [
      ['GET', p],
      ['PATCH', p, { name: 'x' }],
      ['DELETE', p, { confirm: true }],
      ['POST', `${p}/install/verify`],
      ['GET', `${p}/members`],
      ['POST', `${p}/members`, { email: owner.email, role: 'member' }],
      ['DELETE', `${p}/members`, { email: owner.email }],
      ['GET', `${p}/excluded-ips`],
      ['PUT', `${p}/excluded-ips`, { ips: ['192.0.2.1'] }],
      ['POST', `${p}/goals`, { name: 'g', type: 'event', value: 'x' }],
      ['GET', `${p}/goals?period=7d`],
      ['DELETE', `${p}/goals/${goalId}`],
      ['POST', `${p}/funnels`, { name: 'f', steps: [{ type: 'pageview', value: '/' }, { type: 'pageview', value: '/b' }] }],
      ['GET', `${p}/funnels`],
      ['GET', `${p}/funnels/${funnelId}?period=7d`],
      ['DELETE', `${p}/funnels/${funnelId}`],
      ['GET', `${p}/stats?period=7d`],
      ['GET', `${p}/visitors/123?period=7d`],
      ['GET', `${p}/export?period=7d`],
      ['PUT', `${p}/export/schedule`, { frequency: 'daily' }],
      ['GET', `${p}/export/schedule`],
      ['DELETE', `${p}/export/schedule`],
      ['GET', `${p}/exports`],
      ['GET', `${p}/exports/sightline-${domain}-7d-2026-01-01.csv`],
      ['POST', `${p}/hits`, [{ path: '/', userAgent: CHROME, ip: '192.0.2.1' }]],
    ];
  };
  // `..` is left out: the URL parser resolves it before any route sees it.
  const domains = () => [...hostile(domain).filter((d) => d !== '..' && d !== domain.toUpperCase()), `${'a'.repeat(250)}.com`, 'ä.example.com', 'localhost'];

  it('answers the project 404 without a Redis call beyond the credential and rate limit', async () => {
    for (const d of domains()) {
      for (const [method, path, body] of routes(d)) {
        const { res, text, calls: made } = await request(method, path, { token: owner.writeKey, body });
        const what = `${method} ${path.slice(0, 120)}`;
        expect({ status: res.status, text }, what).toEqual({ status: 404, text: '{"error":"Project not found"}' });
        expect(beyondAuth(made), what).toEqual([]);
      }
    }
  });

  it('on the share API and the share page: 404, no lookup', async () => {
    for (const d of domains()) {
      for (const path of [`/api/share/${encodeURIComponent(d)}`, `/api/share/${encodeURIComponent(d)}/stats?period=7d`, `/share/${encodeURIComponent(d)}`]) {
        const { res, calls: made } = await request('GET', path);
        expect(res.status, path).toBe(404);
        expect(beyondAuth(made), path).toEqual([]);
      }
    }
  });

  it('the import answers the project 404 too', async () => {
    for (const d of domains()) {
      const { res, calls: made } = await request('POST', `/api/v1/projects/${encodeURIComponent(d)}/import`, {
        token: owner.writeKey,
        body: '{"timestamp":"2026-01-01T00:00:00Z","kind":"pageview","url":"https://x.example/","visitorId":"1","sessionId":"1"}\n',
        headers: { 'Content-Type': 'application/x-ndjson' },
      });
      expect(res.status, d).toBe(404);
      expect(beyondAuth(made), d).toEqual([]);
    }
  });
});

describe('record ids under a real project', () => {
  const base = () => `/api/v1/projects/${domain}`;

  it('goal and funnel ids: their own 404, and the id never reaches Redis', async () => {
    for (const [method, kind, real, message] of [
      ['DELETE', 'goals', goalId, 'Goal not found'],
      ['DELETE', 'funnels', funnelId, 'Funnel not found'],
      ['GET', 'funnels', funnelId, 'Funnel not found'],
    ] as const) {
      for (const bad of hostile(real).filter((b) => b !== '..')) {
        const { res, text, calls: made } = await request(method, `${base()}/${kind}/${encodeURIComponent(bad)}?period=7d`, { token: owner.writeKey });
        const what = `${method} ${kind} ${JSON.stringify(bad).slice(0, 60)}`;
        expect({ status: res.status, text }, what).toEqual({ status: 404, text: JSON.stringify({ error: message }) });
        expect(mentioning(made, bad), what).toEqual([]);
      }
    }
    // The real ones are still there: nothing above removed them.
    expect((await request('GET', `${base()}/funnels/${funnelId}?period=7d`, { token: owner.readKey })).res.status).toBe(200);
    expect((await request('DELETE', `${base()}/goals/${goalId}`, { token: owner.writeKey })).res.status).toBe(200);
  });

  it('visitor ids answer 400 as before, export names 404, neither touches Redis with the id', async () => {
    const visitor = '12345678901234567890';
    for (const bad of hostile(visitor).filter((b) => b !== '..' && b !== visitor)) {
      const { res, calls: made } = await request('GET', `${base()}/visitors/${encodeURIComponent(bad)}?period=7d`, { token: owner.readKey });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(mentioning(made, bad)).toEqual([]);
    }
    for (const bad of hostile(`sightline-${domain}-7d-2026-01-01.csv`).filter((b) => b !== '..')) {
      const { res, text } = await request('GET', `${base()}/exports/${encodeURIComponent(bad)}`, { token: owner.readKey });
      expect({ status: res.status, text }, JSON.stringify(bad)).toEqual({ status: 404, text: '{"error":"Export not found"}' });
    }
  });
});

describe('account and OAuth ids', () => {
  it('an API key id: 404 "API key not found", not looked up', async () => {
    const keys = JSON.parse((await request('GET', '/api/account/keys', { token: owner.session })).text).keys as { id: string }[];
    for (const bad of hostile(keys[0]!.id)) {
      const { res, text, calls: made } = await request('DELETE', '/api/account/keys', { token: owner.session, body: { id: bad } });
      expect({ status: res.status, text }, JSON.stringify(bad)).toEqual({ status: 404, text: '{"error":"API key not found"}' });
      expect(mentioning(made, bad)).toEqual([]);
    }
    expect((await request('GET', '/api/account/keys', { token: owner.session })).text).toContain(keys[0]!.id);
  });

  it('a sign-in email that cannot be one: 401, not looked up', async () => {
    for (const bad of ['*', `${owner.email}\u0000`, `${owner.email}:x y`, 'a@b@c', `${'a'.repeat(300)}@example.com`]) {
      const { res, calls: made } = await request('POST', '/api/auth/login', { body: { email: bad, password: owner.password } });
      expect(res.status, bad).toBe(401);
      expect(mentioning(made, bad.trim().toLowerCase())).toEqual([]);
    }
  });

  it('client ids, codes, refresh tokens, revoked tokens and CSRF tokens: the unknown answer, never looked up', async () => {
    const verifier = `v-${crypto.randomUUID()}-${crypto.randomUUID()}`;
    const params = {
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: await s256Challenge(verifier),
      code_challenge_method: 'S256',
      scope: 'read',
      resource: 'http://localhost/mcp',
    };
    const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields).toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    for (const bad of hostile(clientId)) {
      // Thunks, run one at a time: the recorded calls are attributed by order.
      const cases: [string, () => ReturnType<typeof request>, number, string?][] = [
        ['authorize: client_id', () => request('GET', `/oauth/authorize?${new URLSearchParams({ ...params, client_id: bad })}`), 400, 'Unknown client_id'],
        ['token: client_id', () => request('POST', '/oauth/token', form({ grant_type: 'refresh_token', refresh_token: 'slr_x', client_id: bad })), 401, 'invalid_client'],
        ['token: code', () => request('POST', '/oauth/token', form({ grant_type: 'authorization_code', code: bad, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier })), 400, 'Unknown or expired code'],
        ['token: refresh_token', () => request('POST', '/oauth/token', form({ grant_type: 'refresh_token', refresh_token: bad, client_id: clientId })), 400, 'invalid_grant'],
        ['revoke: token', () => request('POST', '/oauth/revoke', form({ token: bad, client_id: clientId })), 200],
        ['revoke: client_id', () => request('POST', '/oauth/revoke', form({ token: 'x', client_id: bad })), 401, 'invalid_client'],
        ['authorize: csrf', () => request('POST', '/oauth/authorize', form({ ...params, client_id: clientId, action: 'login', csrf: bad, email: owner.email, password: owner.password })), 403, 'expired'],
      ];
      for (const [what, run, status, says] of cases) {
        const { res, text, calls: made } = await run();
        const label = `${what} ${JSON.stringify(bad).slice(0, 60)}`;
        // Overlong values are refused by the form schema first: a 400 naming the field is the format answer.
        if (res.status === 400 && !(status === 400 && says && text.includes(says))) expect(text, label).toMatch(/too long|required|must/);
        else {
          expect(res.status, label).toBe(status);
          if (says) expect(text, label).toContain(says);
        }
        expect(mentioning(made, bad), label).toEqual([]);
      }
    }
  });
});
