import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { privateRedis } from '../helpers/redis-server.js';

/**
 * Redis stopped mid-run: a private redis-server on its own port (AOF in a temp dir, so the
 * accounts survive a restart). Authenticated routes must answer 503 with Retry-After within
 * 1 s, never 401 and never 200, and recover by themselves when Redis returns.
 */
const redisServer = privateRedis();
const P = '/api/v1/projects';
let h: Harness;
let u: TestUser;
let cold: TestUser;
let domain: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request and how long it took. */
async function timed(method: string, path: string, token?: string, body?: unknown) {
  const start = performance.now();
  const res = await h.call(method, path, { token, body });
  return { res, ms: performance.now() - start, body: await res.json() };
}

/** Every authenticated route answers 503 + Retry-After within 1 s; never 401, never 200. */
async function expectUnavailableEverywhere() {
  const calls: [string, string, string, unknown?][] = [
    ['GET', P, u.readKey], // warm key cache: only the rate limiter needs Redis
    ['GET', `${P}/${domain}`, u.readKey],
    ['POST', P, u.writeKey, { name: 'During outage', domain: 'outage.example.com' }],
    ['PATCH', `${P}/${domain}`, u.writeKey, { name: 'During outage' }],
    ['POST', `${P}/${domain}/install/verify`, u.writeKey],
    ['GET', P, cold.readKey], // never used: the key lookup itself needs Redis
    ['GET', P, u.session],
    ['GET', '/api/account/profile', u.session],
    ['GET', '/api/account/keys', u.session],
  ];
  for (const [method, path, token, body] of calls) {
    const { res, ms, body: answer } = await timed(method, path, token, body);
    expect(res.status, `${method} ${path}`).toBe(503);
    expect(Number(res.headers.get('Retry-After')), `${method} ${path}`).toBeGreaterThan(0);
    expect(answer).toEqual({ error: expect.any(String) });
    expect(ms, `${method} ${path} took ${ms.toFixed(0)} ms`).toBeLessThan(1000);
  }
}

/** Polls until the warm key gets 200 again; returns how long that took. */
async function recoveryTime(limitMs: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    const res = await h.call('GET', P, { token: u.readKey });
    if (res.status === 200) return performance.now() - start;
    expect(res.status).toBe(503);
    await sleep(100);
  }
  throw new Error(`no recovery within ${limitMs} ms`);
}

beforeAll(async () => {
  await redisServer.start();
  h = await createHarness({ env: { REDIS_URL: redisServer.url } });
  [u, cold] = await Promise.all([h.user('outage'), h.user('cold')]);
  domain = h.domain('outage');
  expect((await h.call('POST', P, { token: u.writeKey, body: { name: 'Outage', domain } })).status).toBe(201);
});

afterAll(async () => {
  await closeHarness();
  await redisServer.dispose();
});

describe('Redis outage', () => {
  it('works while Redis is up (and warms the key cache)', async () => {
    const { res } = await timed('GET', P, u.readKey);
    expect(res.status).toBe(200);
    expect((await timed('GET', `${P}/${domain}`, u.readKey)).res.status).toBe(200);
  });

  it('Redis stopped: 503 with Retry-After within 1 s on every authenticated route, never 401 or 200', async () => {
    await redisServer.stop('SIGTERM');
    expect(await redisServer.pings()).toBe(false);
    await expectUnavailableEverywhere();
  });

  it('malformed credentials still get 401 while Redis is down (no lookup needed)', async () => {
    const res = await h.call('GET', P, { token: 'sl_garbled' });
    expect(res.status).toBe(401);
    expect((await h.call('GET', P)).status).toBe(401);
  });

  it('an event whose site cannot be a project id is unknown-site while Redis is down: no lookup, no 503', async () => {
    for (const site of ['prj_x:members', '*', `${'prj_'}${'a'.repeat(20)}:installed`]) {
      const res = await h.call('POST', '/api/event', { body: { site, kind: 'pageview', url: `https://${domain}/` } });
      expect(res.status, site).toBe(202);
      expect(res.headers.get('x-sightline-dropped'), site).toBe('unknown-site');
    }
  });

  it('Redis back on the same port: the service recovers by itself', async () => {
    await redisServer.start();
    const ms = await recoveryTime(5000);
    expect(ms).toBeLessThan(5000);
    for (const token of [u.readKey, cold.readKey, u.session]) {
      expect((await h.call('GET', P, { token })).status).toBe(200);
    }
    const detail = await h.call('GET', `${P}/${domain}`, { token: u.readKey });
    expect((await detail.json()).name).toBe('Outage'); // the refused PATCH changed nothing
  });

  it('Redis hanging (process paused): 503 within 1 s, then recovery when it resumes', async () => {
    redisServer.process!.kill('SIGSTOP');
    try {
      await expectUnavailableEverywhere();
    } finally {
      redisServer.process!.kill('SIGCONT');
    }
    expect(await recoveryTime(5000)).toBeLessThan(5000);
    expect((await h.call('PATCH', `${P}/${domain}`, { token: u.writeKey, body: { name: 'After' } })).status).toBe(200);
  });
});
