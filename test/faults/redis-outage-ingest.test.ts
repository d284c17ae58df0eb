import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeHarness, createHarness, listenAsNode, type Harness, type Listening, type TestUser } from '../helpers/harness.js';
import { privateRedis } from '../helpers/redis-server.js';

/**
 * `POST /api/event` while Redis is stopped and after it is back (its own redis-server, stopped for
 * real; the authenticated routes' 503s are test/integration/redis-outage.test.ts). What ingest
 * does then, as built:
 * - a project this process looked up within the last 5 s (the ingest project cache) keeps
 *   collecting: the throttle decides from its in-process counters, the visitor id uses the day's
 *   salt the process holds, the session falls back to the visitor's 30-minute slot; every such
 *   event gets 202 and is stored;
 * - any other project (never seen, or seen longer ago) cannot be looked up: 503 with Retry-After,
 *   within a second, never a silent 202 (`unknown-site` would be a lie);
 * - once Redis is back, both collect again without a restart.
 * Served as `npm start` serves it (the Node fast path) over the harness's direct sink, so a 202
 * means the row is in ClickHouse and counts are exact.
 */
const redisServer = privateRedis();
const INGEST_IP_PER_MIN = 5;
let h: Harness;
let server: Listening;
let owner: TestUser;
const projects: Record<'seen' | 'unseen', { id: string; domain: string }> = {} as never;

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

async function send(which: 'seen' | 'unseen', path: string, ip = '10.66.0.1') {
  const { id, domain } = projects[which];
  const start = performance.now();
  const res = await fetch(`${server.url}/api/event`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': UA, 'X-Forwarded-For': ip },
    body: JSON.stringify({ site: id, kind: 'pageview', url: `https://${domain}${path}` }),
  });
  return { status: res.status, dropped: res.headers.get('x-sightline-dropped'), retryAfter: res.headers.get('retry-after'), body: await res.text(), ms: performance.now() - start };
}

async function storedPaths(which: 'seen' | 'unseen'): Promise<Map<string, number>> {
  const rs = await h.deps.clickhouse.query({
    query: 'SELECT path, count() AS n FROM events WHERE project_id = {id:String} GROUP BY path',
    query_params: { id: projects[which].id },
    format: 'JSONEachRow',
  });
  return new Map((await rs.json<{ path: string; n: string }>()).map((r) => [r.path, Number(r.n)]));
}

beforeAll(async () => {
  await redisServer.start();
  h = await createHarness({ env: { REDIS_URL: redisServer.url, TRUST_PROXY: '1', INGEST_IP_PER_MIN: String(INGEST_IP_PER_MIN) } });
  server = await listenAsNode(h);
  owner = await h.user('outage-ingest');
  for (const which of ['seen', 'unseen'] as const) {
    const domain = h.domain(`outage-${which}`);
    const res = await h.call('POST', '/api/v1/projects', { token: owner.writeKey, body: { name: which, domain } });
    expect(res.status).toBe(201);
    projects[which] = { id: (await res.json()).id, domain };
  }
});

afterAll(async () => {
  await server?.close();
  await closeHarness();
  await redisServer.dispose();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ingest while Redis is stopped and restarted', () => {
  /** Paths answered 202 without a drop reason, per project: each must be stored exactly once. */
  const accepted: Record<'seen' | 'unseen', string[]> = { seen: [], unseen: [] };
  let ip = 0;
  const nextIp = () => `10.66.${++ip >> 8}.${ip & 255}`;
  const expectAccepted = (which: 'seen' | 'unseen', path: string, r: Awaited<ReturnType<typeof send>>) => {
    expect(r, path).toMatchObject({ status: 202, dropped: null });
    accepted[which].push(path);
  };
  const expectUnavailable = (r: Awaited<ReturnType<typeof send>>) => {
    expect(r.status).toBe(503);
    expect(JSON.parse(r.body)).toEqual({ error: 'Service temporarily unavailable' });
    expect(Number(r.retryAfter)).toBeGreaterThan(0);
    expect(r.ms).toBeLessThan(1000);
  };

  it('Redis stopped: a project looked up in the last 5 s keeps collecting (throttle in-process), others get 503', async () => {
    // The in-process IP window is per minute: keep the burst below clear of a minute boundary.
    if (Date.now() % 60_000 > 50_000) await sleep(60_000 - (Date.now() % 60_000) + 100);
    expectAccepted('seen', '/warm', await send('seen', '/warm', nextIp()));
    await redisServer.stop('SIGTERM');
    expect(await redisServer.pings()).toBe(false);
    // Sent together, so every event is looked up well within the cache's 5 s (inserts take longer).
    const distinct = Array.from({ length: 6 }, (_, i) => `/down-${i}`);
    const sameIp = Array.from({ length: INGEST_IP_PER_MIN + 1 }, (_, i) => `/same-ip-${i}`);
    const [spread, burst] = await Promise.all([
      Promise.all(distinct.map((path) => send('seen', path, nextIp()))),
      // One address over INGEST_IP_PER_MIN: the in-process counter throttles it, as Redis would.
      Promise.all(sameIp.map((path) => send('seen', path, '10.66.255.1'))),
    ]);
    spread.forEach((r, i) => expectAccepted('seen', distinct[i]!, r));
    expect(burst.map((r) => r.status)).toEqual(Array(sameIp.length).fill(202));
    expect(burst.filter((r) => r.dropped === 'throttled')).toHaveLength(1);
    burst.forEach((r, i) => r.dropped === null && accepted.seen.push(sameIp[i]!));
    // A project this process has not looked up cannot be placed: 503, not a silent drop.
    expectUnavailable(await send('unseen', '/never-looked-up', nextIp()));
    // The same answer from the Hono route (Workers, and any server without the Node fast path).
    const viaApp = await h.call('POST', '/api/event', { body: { site: projects.unseen.id, kind: 'pageview', url: `https://${projects.unseen.domain}/x` }, headers: { 'User-Agent': UA } });
    expect(viaApp.status).toBe(503);
    expect(Number(viaApp.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('Redis still down: once the cached lookup is older than 5 s the seen project gets 503 too, never a drop', async () => {
    const start = Date.now();
    let last: Awaited<ReturnType<typeof send>>;
    for (let i = 0; ; i++) {
      const path = `/until-expiry-${i}`;
      last = await send('seen', path, nextIp());
      if (last.status !== 202) break;
      expectAccepted('seen', path, last);
      expect(Date.now() - start).toBeLessThan(10_000);
    }
    expectUnavailable(last);
  });

  it('Redis back: both projects collect again without a restart, and every accepted event is stored once', async () => {
    await redisServer.start();
    const start = Date.now();
    for (let i = 0; ; i++) {
      const path = `/recovery-${i}`;
      const r = await send('seen', path, nextIp());
      if (r.status === 202) {
        expectAccepted('seen', path, r);
        break;
      }
      expect(r.status).toBe(503);
      expect(Date.now() - start).toBeLessThan(5000);
      await sleep(100);
    }
    for (let i = 0; i < 3; i++) {
      expectAccepted('seen', `/after-${i}`, await send('seen', `/after-${i}`, nextIp()));
      expectAccepted('unseen', `/after-${i}`, await send('unseen', `/after-${i}`, nextIp()));
    }
    for (const which of ['seen', 'unseen'] as const) {
      const stored = await storedPaths(which);
      expect(Object.fromEntries(stored)).toEqual(Object.fromEntries(accepted[which].map((p) => [p, 1])));
    }
    expect(accepted.seen.length).toBeGreaterThanOrEqual(1 + 6 + INGEST_IP_PER_MIN + 1 + 3);
  });
});
