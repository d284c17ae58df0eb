import type { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRespRedis, type RespRedis } from '../../src/adapters/redis-resp.js';
import { SESSION_IDLE_MS, sessionId, slotSession } from '../../src/ingest/enrich/session.js';
import { createVisitorHasher, hashToUInt64, rotateSalts, SALT_TTL_SECONDS, visitorId } from '../../src/ingest/enrich/visitor.js';
import { TEST_REDIS_URL, unique } from '../helpers/harness.js';

let conn: RespRedis;
let redis: Redis;
const touched = new Set<string>();

/** Days far from today so other test files' salts (which use the real clock) never collide. */
const base = Date.UTC(2031, 2, 14, 10, 0, 0) + Math.floor(Math.random() * 1000) * 86_400_000;
const DAY = 86_400_000;
const dayKey = (t: number) => `salt:${new Date(t).toISOString().slice(0, 10)}`;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const UINT64 = /^(0|[1-9]\d{0,19})$/;
const isUInt64 = (s: string) => UINT64.test(s) && BigInt(s) < 2n ** 64n;

beforeAll(async () => {
  conn = await connectRespRedis({ url: TEST_REDIS_URL });
  redis = conn.redis;
  for (let d = -1; d <= 3; d++) touched.add(dayKey(base + d * DAY));
  await redis.del(...touched);
});

afterAll(async () => {
  if (touched.size) await redis.del(...touched);
  await conn.close();
});

describe('visitor id', () => {
  it('is a UInt64 decimal string, the same for the same inputs on the same day across processes', async () => {
    const project = unique('p');
    const a = createVisitorHasher(redis);
    const b = createVisitorHasher(redis); // another app instance: must find the salt in Redis
    const id = await a.visitorId(project, '203.0.113.7', UA, base);
    expect(isUInt64(id)).toBe(true);
    expect(await a.visitorId(project, '203.0.113.7', UA, base + 3_600_000)).toBe(id);
    expect(await b.visitorId(project, '203.0.113.7', UA, base + 7_200_000)).toBe(id);
    expect(await visitorId(redis, project, '203.0.113.7', UA, base)).toBe(id);
  });

  it('changes with the day, the project, the IP and the UA', async () => {
    const project = unique('p');
    const h = createVisitorHasher(redis);
    const id = await h.visitorId(project, '203.0.113.7', UA, base);
    const others = await Promise.all([
      h.visitorId(project, '203.0.113.7', UA, base + DAY),
      h.visitorId(unique('p'), '203.0.113.7', UA, base),
      h.visitorId(project, '203.0.113.8', UA, base),
      h.visitorId(project, '203.0.113.7', `${UA} Edg/120.0.0.0`, base),
    ]);
    for (const other of others) expect(other).not.toBe(id);
    expect(new Set(others).size).toBe(others.length);
    // The in-process cache follows the salt: back on the first day, the first day's id.
    expect(await h.visitorId(project, '203.0.113.7', UA, base + DAY)).toBe(others[0]);
    expect(await h.visitorId(project, '203.0.113.7', UA, base)).toBe(id);
  });

  it('does not let fields run into each other', async () => {
    const h = createVisitorHasher(redis);
    const x = await h.visitorId('p1', '1.2.3.4', UA, base);
    const y = await h.visitorId('p', '11.2.3.4', UA, base);
    expect(x).not.toBe(y);
  });

  it('stores one salt per UTC day with a TTL of at most 48 h, and never the IP', async () => {
    const h = createVisitorHasher(redis);
    const ip = '198.51.100.23';
    const project = unique('p');
    const id = await h.visitorId(project, ip, UA, base + 2 * DAY);
    const key = dayKey(base + 2 * DAY);
    const salt = await redis.get<string>(key);
    expect(typeof salt).toBe('string');
    expect(atob(String(salt)).length).toBe(32);
    expect(String(salt)).not.toContain(ip);
    // The id is HMAC-SHA-256(salt, project NUL ip NUL ua) cut to 64 bits (checked with WebCrypto).
    const enc = new TextEncoder();
    const hmacKey = await crypto.subtle.importKey('raw', enc.encode(String(salt)), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    const mac = await crypto.subtle.sign('HMAC', hmacKey, enc.encode(`${project}\0${ip}\0${UA}`));
    expect(id).toBe(new DataView(mac).getBigUint64(0).toString());
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(SALT_TTL_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(48 * 3600);
  });

  it('rotateSalts pre-creates today and tomorrow, keeping an existing salt', async () => {
    const now = base + 3 * DAY;
    const today = dayKey(now);
    const tomorrow = dayKey(now + DAY);
    await redis.del(tomorrow);
    await createVisitorHasher(redis).visitorId('p', '203.0.113.1', UA, now); // creates today's salt
    const before = await redis.get<string>(today);
    expect(before).not.toBeNull();
    const keys = await rotateSalts(redis, now);
    expect(keys).toEqual([today, tomorrow]);
    const [t, m] = await Promise.all([redis.get<string>(today), redis.get<string>(tomorrow)]);
    expect(t).toBe(before);
    expect(m).not.toBeNull();
    expect(await rotateSalts(redis, now)).toEqual(keys);
    expect(await redis.get<string>(tomorrow)).toBe(m);
    for (const k of keys) {
      const ttl = await redis.ttl(k);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(48 * 3600);
    }
    // The hasher uses the salt rotateSalts created for tomorrow.
    const fresh = createVisitorHasher(redis);
    const viaRotated = await fresh.visitorId('p', '203.0.113.1', UA, now + DAY);
    expect(await createVisitorHasher(redis).visitorId('p', '203.0.113.1', UA, now + DAY)).toBe(viaRotated);
  });
});

describe('session id', () => {
  it('stays the same while the visitor is active and changes after 30 min idle', async () => {
    const project = unique('p');
    const visitor = '1234567890123456789';
    const t0 = base;
    const s1 = (await sessionId(redis, project, visitor, t0)).id;
    expect(isUInt64(s1)).toBe(true);
    expect((await sessionId(redis, project, visitor, t0 + 10 * 60_000)).id).toBe(s1);
    // 29 min after the last event (39 min after the first): still the same session.
    expect((await sessionId(redis, project, visitor, t0 + 39 * 60_000)).id).toBe(s1);
    // 30 min idle: a new session.
    const s2 = (await sessionId(redis, project, visitor, t0 + 39 * 60_000 + SESSION_IDLE_MS)).id;
    expect(s2).not.toBe(s1);
    expect(isUInt64(s2)).toBe(true);
    expect((await sessionId(redis, project, visitor, t0 + 40 * 60_000 + SESSION_IDLE_MS)).id).toBe(s2);
    await redis.del(`sess:${project}:${visitor}`);
  });

  it('keeps sessions apart per visitor and per project, and expires the key after the idle time', async () => {
    const project = unique('p');
    const a = (await sessionId(redis, project, '1', base)).id;
    const b = (await sessionId(redis, project, '2', base)).id;
    const c = await sessionId(redis, unique('p'), '1', base);
    expect(new Set([a, b, c]).size).toBe(3);
    const pttl = await redis.pttl(`sess:${project}:1`);
    expect(pttl).toBeGreaterThan(SESSION_IDLE_MS - 5_000);
    expect(pttl).toBeLessThanOrEqual(SESSION_IDLE_MS);
    await redis.del(`sess:${project}:1`, `sess:${project}:2`);
  });

  it('does not move the last-seen time back for a late event', async () => {
    const project = unique('p');
    const s = (await sessionId(redis, project, '9', base + 20 * 60_000)).id;
    expect((await sessionId(redis, project, '9', base)).id).toBe(s); // late, out of order
    // Idle is measured from the newest event (base + 20 min), so base + 45 min continues it.
    expect((await sessionId(redis, project, '9', base + 45 * 60_000)).id).toBe(s);
    await redis.del(`sess:${project}:9`);
  });

  it('bounds each session from below: no event of it is older than its first less the idle time', async () => {
    const project = unique('p');
    const first = await sessionId(redis, project, '5', base);
    expect(first.floorMs).toBe(base - SESSION_IDLE_MS);
    // Later events and a late one within the idle time of the first: the same session and bound.
    expect(await sessionId(redis, project, '5', base + 10 * 60_000)).toEqual(first);
    expect(await sessionId(redis, project, '5', base - 29 * 60_000)).toEqual(first);
    // A late event the idle time or more before the first is a visit of its own, under its own bound...
    const early = await sessionId(redis, project, '5', base - SESSION_IDLE_MS);
    expect(early.id).not.toBe(first.id);
    expect(early.floorMs).toBe(base - 2 * SESSION_IDLE_MS);
    // ...and leaves the current session as it was.
    expect(await sessionId(redis, project, '5', base + 20 * 60_000)).toEqual(first);
    await redis.del(`sess:${project}:5`);
  });

  it('continues a session whose key predates the bound, which stays unknown (0)', async () => {
    const project = unique('p');
    await redis.set(`sess:${project}:6`, `123456789:${base}`, { px: SESSION_IDLE_MS });
    expect(await sessionId(redis, project, '6', base + 60_000)).toEqual({ id: '123456789', floorMs: 0 });
    expect(await redis.get(`sess:${project}:6`)).toBe(`123456789:${base + 60_000}:0`);
    await redis.del(`sess:${project}:6`);
  });

  it("bounds a Redis-down session by its 30-minute slot", () => {
    const at = 1_780_000_000_000 + 7 * 60_000;
    const slot = slotSession('42', at);
    expect(slot.floorMs).toBe(Math.floor(at / SESSION_IDLE_MS) * SESSION_IDLE_MS);
    expect(slotSession('42', slot.floorMs + SESSION_IDLE_MS - 1)).toEqual(slot);
    expect(slotSession('42', slot.floorMs + SESSION_IDLE_MS).id).not.toBe(slot.id);
  });

  it('starts a new session after the real key expired (short idle)', async () => {
    const project = unique('p');
    const now = Date.now();
    const s = (await sessionId(redis, project, '7', now, 150)).id;
    await new Promise((r) => setTimeout(r, 300));
    expect(await redis.exists(`sess:${project}:7`)).toBe(0);
    // Same clock value: only the expired key can explain a new session.
    expect((await sessionId(redis, project, '7', now, 150)).id).not.toBe(s);
    await redis.del(`sess:${project}:7`);
  });
});

describe('hashToUInt64', () => {
  it('maps the same string to the same UInt64 and different strings apart', () => {
    const a = hashToUInt64('visitor-abc');
    expect(isUInt64(a)).toBe(true);
    expect(hashToUInt64('visitor-abc')).toBe(a);
    expect(hashToUInt64('visitor-abd')).not.toBe(a);
    // Pinned values: stored ids must not change between versions, or re-imports would split visitors.
    expect(hashToUInt64('')).toBe('5227514475777527171');
    expect(a).toBe('14942692964056779433');
  });

  it('spreads 200 000 sequential ids without a collision, over the whole 64-bit range', () => {
    const seen = new Set<string>();
    const topQuarters = [0, 0, 0, 0];
    for (let i = 0; i < 200_000; i++) {
      const id = hashToUInt64(`s${i}`);
      seen.add(id);
      topQuarters[Number(BigInt(id) >> 62n)]!++;
    }
    expect(seen.size).toBe(200_000);
    // Each quarter of the range should get ~50 000; a biased hash would starve some.
    for (const n of topQuarters) expect(Math.abs(n - 50_000)).toBeLessThan(1_500);
  });
});
