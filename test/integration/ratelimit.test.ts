import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../scripts/admin.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { nextWindowStart } from '../helpers/rate-window.js';

/** Sliding-window limits with IETF draft-10 headers, on short windows so a test can wait one out. */
let h: Harness;
beforeAll(async () => {
  h = await createHarness({
    env: { RATE_LIMIT_API_PER_MIN: '5', RATE_LIMIT_PATCH_PER_MIN: '3', RATE_LIMIT_VERIFY_PER_MIN: '2', RATE_LIMIT_EXPORT_PER_MIN: '2', RATE_LIMIT_WINDOW_SEC: '2' },
  });
});
afterAll(closeHarness);

const P = '/api/v1/projects';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The requests that fill a window all land in one 2 s window, so the sliding weight cannot free a slot. */
const windowStart = () => nextWindowStart(2);

/** Items of a draft-10 structured-field list header, by policy name: `"api";q=5;w=2` → {api: {q: 5, w: 2}}. */
function parseList(header: string | null): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const item of (header ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const [name, ...params] = item.split(';');
    expect(name).toMatch(/^"[a-z]+"$/);
    out[name.slice(1, -1)] = Object.fromEntries(params.map((p) => p.split('=')).map(([k, v]) => [k, Number(v)]));
  }
  return out;
}

async function expect429(res: Response, policy: string, quota: number) {
  expect(res.status).toBe(429);
  expect(await res.json()).toEqual({ error: 'Too many requests' });
  const retryAfter = Number(res.headers.get('Retry-After'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(2);
  expect(parseList(res.headers.get('RateLimit-Policy'))[policy]).toEqual({ q: quota, w: 2 });
  expect(parseList(res.headers.get('RateLimit'))[policy]).toEqual({ r: 0, t: retryAfter });
  return retryAfter;
}

async function ownProject(user: TestUser): Promise<string> {
  // Creation counts against the api limit; each test uses a fresh user so that is predictable.
  const domain = h.domain();
  expect((await h.call('POST', P, { token: user.writeKey, body: { name: 'RL', domain } })).status).toBe(201);
  return domain;
}

describe('per-key api limit on every /api/v1 route', () => {
  it('successful answers carry RateLimit-Policy and RateLimit with the remaining count', async () => {
    const u = await h.user('api');
    // Both requests in one window: across a window's start the sliding window rounds the first one's share down.
    await windowStart();
    const res = await h.call('GET', P, { token: u.readKey });
    expect(res.status).toBe(200);
    expect(parseList(res.headers.get('RateLimit-Policy'))).toEqual({ api: { q: 5, w: 2 } });
    const state = parseList(res.headers.get('RateLimit')).api;
    expect(state.r).toBe(4);
    expect(state.t).toBeGreaterThanOrEqual(0);
    expect(state.t).toBeLessThanOrEqual(2);
    expect(parseList((await h.call('GET', P, { token: u.readKey })).headers.get('RateLimit')).api.r).toBe(3);
  });

  it('fills the window → 429 with headers; another key of the same account is counted apart; waiting Retry-After succeeds', async () => {
    const u = await h.user('api');
    await windowStart();
    for (let i = 0; i < 5; i++) expect((await h.call('GET', P, { token: u.readKey })).status).toBe(200);
    const retryAfter = await expect429(await h.call('GET', P, { token: u.readKey }), 'api', 5);
    expect((await h.call('GET', P, { token: u.writeKey })).status).toBe(200);
    await sleep(retryAfter * 1000);
    const again = await h.call('GET', P, { token: u.readKey });
    expect(again.status).toBe(200);
    expect(again.headers.get('RateLimit-Policy')).toContain('"api"');
  });

  it('a session is limited per account', async () => {
    const u = await h.user('api');
    await windowStart();
    for (let i = 0; i < 5; i++) expect((await h.call('GET', P, { token: u.session })).status).toBe(200);
    await expect429(await h.call('GET', P, { token: u.session }), 'api', 5);
  });

  it('unauthenticated requests are refused before the limiter (no headers, 401)', async () => {
    const res = await h.call('GET', P);
    expect(res.status).toBe(401);
    expect(res.headers.get('RateLimit')).toBeNull();
  });
});

describe('PATCH limit', () => {
  it('fills the window → 429 with Retry-After and both policies; waiting Retry-After succeeds', async () => {
    const u = await h.user('patch');
    const domain = await ownProject(u);
    const patch = (name: string) => h.call('PATCH', `${P}/${domain}`, { token: u.writeKey, body: { name } });
    await windowStart();
    for (let i = 1; i <= 3; i++) {
      const ok = await patch(`v${i}`);
      expect(ok.status).toBe(200);
      expect(parseList(ok.headers.get('RateLimit-Policy')).patch).toEqual({ q: 3, w: 2 });
      expect(parseList(ok.headers.get('RateLimit')).patch.r).toBe(3 - i);
    }
    const limited = await patch('v4');
    const retryAfter = await expect429(limited, 'patch', 3);
    // The refused update did not happen.
    expect((await (await h.call('GET', `${P}/${domain}`, { token: u.readKey })).json()).name).toBe('v3');
    await sleep(retryAfter * 1000);
    const after = await patch('v5');
    expect(after.status).toBe(200);
    expect((await after.json()).name).toBe('v5');
  });
});

describe('install verify limit (per project)', () => {
  it('is shared by everyone verifying one project and separate per project', async () => {
    const [owner, admin] = await Promise.all([h.user('verify'), h.user('verify')]);
    const domain = await ownProject(owner);
    const other = await ownProject(owner);
    await runAdmin(h.deps.redis, ['member:add', '--domain', domain, '--email', admin.email, '--role', 'admin']);
    const verify = (token: string, d = domain) => h.call('POST', `${P}/${d}/install/verify`, { token });
    await windowStart();
    const first = await verify(owner.writeKey);
    expect(first.status).toBe(200);
    expect(parseList(first.headers.get('RateLimit-Policy')).verify).toEqual({ q: 2, w: 2 });
    expect((await verify(admin.writeKey)).status).toBe(200);
    const retryAfter = await expect429(await verify(admin.writeKey), 'verify', 2);
    expect((await verify(owner.writeKey, other)).status).toBe(200);
    await sleep(retryAfter * 1000);
    expect((await verify(owner.writeKey)).status).toBe(200);
  });
});

describe('export limit', () => {
  it('fills the window → 429 with headers; waiting Retry-After succeeds', async () => {
    const u = await h.user('export');
    const domain = await ownProject(u);
    const exportCsv = () => h.call('GET', `${P}/${domain}/export?period=7d`, { token: u.readKey });
    await windowStart();
    for (let i = 0; i < 2; i++) {
      const ok = await exportCsv();
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toMatch(/text\/csv/);
      expect(parseList(ok.headers.get('RateLimit-Policy')).export).toEqual({ q: 2, w: 2 });
      await ok.text();
    }
    const retryAfter = await expect429(await exportCsv(), 'export', 2);
    await sleep(retryAfter * 1000);
    const after = await exportCsv();
    expect(after.status).toBe(200);
    await after.text();
  });
});
