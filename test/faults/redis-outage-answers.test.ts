import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { redisDataVersions } from '../../src/adapters/data-version.js';
import { versionedRowStore } from '../../src/adapters/versioned-row-store.js';
import type { Deps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import type { Project } from '../../src/projects/store.js';
import { AnswerCache } from '../../src/reports/answer-cache.js';
import { findReport } from '../../src/reports/registry.js';
import { closeHarness, createHarness, type Harness } from '../helpers/harness.js';
import { privateRedis } from '../helpers/redis-server.js';
import { chTime } from '../helpers/report-fixtures.js';

/**
 * The answer cache across a Redis that is killed (-9) and started again, with two app instances
 * (A writes, B only reads) sharing it, as two Node processes or two Worker isolates would. No
 * answer may miss a row ClickHouse stored: while Redis is down both compute every answer; once it
 * is back, A makes the version move it could not make, and B, which held an answer from before
 * the write, computes it again instead of reusing it.
 */
const redisServer = privateRedis();
const clock = fixedClock(Date.parse('2026-09-14T08:20:00.000Z') + 271);
let h: Harness;
const logged: string[] = [];
const instances = {} as Record<'a' | 'b', { deps: Deps; cache: AnswerCache }>;
const project: Project = {
  id: newId('project'), name: 'Outage', domain: 'outage.example', timeZone: 'UTC', publicStatsEnabled: false,
  brandColor: null, icon: null, createdAt: '2026-01-01T00:00:00.000Z', ownerId: newId('account'),
};

const stats = findReport('stats')!;
const input = v.parse(stats.query, { period: '7d' }) as never;
const ask = async (deps: Deps) => (await stats.run({ deps, project, role: 'owner' }, input)) as { pageviews: number };
const uncached = () => ask({ ...h.deps, answers: undefined });
let visitor = 0;
const pageview = (ts: number) => ({ project_id: project.id, ts: chTime(ts), kind: 'pageview', visitor_id: ++visitor, session_id: visitor, path: '/' });

beforeAll(async () => {
  await redisServer.start();
  h = await createHarness({ clock, env: { REDIS_URL: redisServer.url } });
  for (const name of ['a', 'b'] as const) {
    const versions = redisDataVersions(h.deps.redis, (line) => logged.push(line));
    const cache = new AnswerCache(versions);
    instances[name] = { cache, deps: { ...h.deps, answers: cache, rowStore: versionedRowStore(h.deps.rowStore, versions, clock), dataVersions: versions } };
  }
});
afterAll(async () => {
  await closeHarness();
  await redisServer.dispose();
});

describe('answers across a Redis outage', () => {
  it('no instance serves an answer older than a write made while Redis was down', async () => {
    const { a, b } = instances;
    await a.deps.rowStore.insert('events', [1, 2, 3].map((d) => pageview(clock.now() - d * 86_400_000)));
    for (const { deps, cache } of [a, b]) {
      expect((await ask(deps)).pageviews).toBe(3);
      clock.advance(1003);
      expect(await ask(deps)).toEqual(await uncached());
      expect(cache.counts).toEqual({ computed: 1, reused: 1 });
    }

    await redisServer.stop('SIGKILL');
    await a.deps.rowStore.insert('events', [pageview(clock.now() - 5000)]);
    expect(logged.join('\n')).toMatch(/data version not moved in Redis/);
    clock.advance(1009);
    // Versions cannot be read: every answer is computed, none reused.
    for (const { deps } of [a, b]) expect(await ask(deps)).toEqual({ ...(await uncached()), pageviews: 4 });
    expect(b.cache.counts.reused).toBe(1);

    await redisServer.start();
    for (let i = 0; i < 100 && (await h.deps.redis.ping().catch(() => null)) !== 'PONG'; i++) await new Promise((r) => setTimeout(r, 50));
    clock.advance(1013);
    // A reads first: the move it owes is made; B then meets a new version and computes.
    expect(await ask(a.deps)).toEqual(await uncached());
    const before = { ...b.cache.counts };
    expect(await ask(b.deps)).toEqual({ ...(await uncached()), pageviews: 4 });
    expect(b.cache.counts).toEqual({ computed: before.computed + 1, reused: before.reused });
  });
});
