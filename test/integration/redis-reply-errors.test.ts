import type { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { errorPayload, isStoreReplyError, isStoreUnavailable } from '../../src/errors.js';
import { IngestThrottle } from '../../src/ingest/throttle.js';
import { ProjectKeys } from '../../src/projects/store.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';

// Redis answering a command with an error (WRONGTYPE, NOSCRIPT…) is not an outage: Redis is up
// and refused the command. The API answers 500 and logs the cause; only a failure to reach Redis
// is a 503. The errors here are real ones, from the test Redis, on keys made to hold the wrong type.

let h: Harness;
let redis: Redis;
const made: string[] = [];

/** A key holding a hash, so string and counter commands on it fail with WRONGTYPE. */
async function wrongTypeKey(key = `test:wrongtype:${unique()}`): Promise<string> {
  await redis.hset(key, { a: '1' });
  made.push(key);
  return key;
}

beforeAll(async () => {
  h = await createHarness();
  redis = h.deps.redis as Redis;
});
afterAll(async () => {
  if (made.length) await redis.del(...made);
  await closeHarness();
});

describe('the RESP adapter answers reply errors as the REST API does', () => {
  it('a single command: an UpstashError with Redis text, not StoreUnavailableError', async () => {
    const key = await wrongTypeKey();
    const err = await redis.get(key).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'UpstashError', message: expect.stringContaining('WRONGTYPE') });
    expect(isStoreReplyError(err)).toBe(true);
    expect(isStoreUnavailable(err)).toBe(false);
    const noScript = await redis.evalsha('0'.repeat(40), [], []).catch((e: unknown) => e);
    expect(noScript).toMatchObject({ name: 'UpstashError', message: expect.stringContaining('NOSCRIPT') });
  });

  it('a pipeline and a transaction: the failing command is named, the others still ran', async () => {
    const key = await wrongTypeKey();
    const ok = `test:ok:${unique()}`;
    made.push(ok);
    const piped = await redis.pipeline().set(ok, 'p').get(key).exec({ keepErrors: true });
    expect(piped[0]).toEqual({ error: undefined, result: 'OK' });
    expect(piped[1]!.error).toMatch(/WRONGTYPE/);
    const tx = await redis.multi().set(ok, 't').incr(key).get(ok).exec({ keepErrors: true });
    expect(tx.map((r) => (r.error ? 'error' : r.result))).toEqual(['OK', 'error', 't']);
    expect(tx[1]!.error).toMatch(/WRONGTYPE/);
    const thrown = await redis.multi().incr(key).exec().catch((e: unknown) => e);
    expect(isStoreReplyError(thrown)).toBe(true);
  });

  it('a transaction Redis refuses whole (EXECABORT) fails every command, as a reply error', async () => {
    // HSET without a field has the wrong number of arguments: refused when queued, so EXEC aborts.
    const never = `test:never:${unique()}`;
    const answers = await redis.multi().set(never, 'x').hset(never, {}).exec({ keepErrors: true });
    expect(answers).toHaveLength(2);
    for (const a of answers) expect(a.error).toMatch(/EXECABORT|wrong number/i);
    expect(await redis.exists(never)).toBe(0);
  });
});

describe('the API', () => {
  it('answers a reply error with 500 and logs its cause (without the command)', async () => {
    const u = await h.user('reply');
    const domain = h.domain('reply');
    // The domain's key made to hold a hash: looking the project up fails with WRONGTYPE.
    await wrongTypeKey(ProjectKeys.domain(domain));
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const res = await h.call('GET', `/api/v1/projects/${domain}`, { token: u.readKey });
      expect(res.status).toBe(500);
      expect(res.headers.get('retry-after')).toBeNull();
      expect(await res.json()).toEqual({ error: 'Internal server error' });
      const lines = logged.mock.calls.map((args) => args.map(String).join(' '));
      expect(lines).toContainEqual(expect.stringMatching(/^\[sightline\] Redis refused a command: WRONGTYPE/));
    } finally {
      logged.mockRestore();
    }
  });

  it('keeps 503 for Redis out of reach over REST (a failed fetch, a gateway page instead of JSON)', () => {
    expect(errorPayload(new TypeError('fetch failed')).status).toBe(503);
    expect(errorPayload(Object.assign(new Error('Unable to parse response body: <html>'), { name: 'UpstashJSONParseError' })).status).toBe(503);
  });
});

describe('the ingest throttle', () => {
  it('decides a refused script in-process without taking it for an outage', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      let now = Date.now();
      const throttle = new IngestThrottle(redis, { projectPerSec: 1000, ipPerMin: 1000 }, { now: () => now });
      const project = `thr-refused-${unique()}`;
      // The project's counter of this second is a hash: INCR inside the script fails.
      await wrongTypeKey(`ingest:rl:p:${project}:${Math.floor(now / 1000)}`);
      const verdict = await throttle.check(project, '192.0.2.10');
      expect(verdict).toEqual({ allowed: true });
      // Not an outage: Redis is asked again at once, and answers for a healthy key.
      expect(throttle.degraded).toBe(false);
      now += 1000;
      const next = await throttle.check(project, '192.0.2.10', undefined);
      expect(next.allowed).toBe(true);
      expect(throttle.degraded).toBe(false);
      await redis.del(`ingest:rl:p:${project}:${Math.floor(now / 1000)}`, `ingest:rl:ip:192.0.2.10:${Math.floor(now / 60_000)}`);
      expect(logged.mock.calls.map((a) => String(a[0]))).toContainEqual(expect.stringMatching(/ingest throttle: Redis refused the script: .*WRONGTYPE/));
    } finally {
      logged.mockRestore();
    }
  });
});
