import type { Redis } from '@upstash/redis';
import { describe, expect, it } from 'vitest';
import { DATA_VERSION_KEY, redisDataVersions, type DataVersions } from '../../src/adapters/data-version.js';
import { EncodedRows } from '../../src/adapters/row-store.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { earliestOf, projectsOf, touchesClosedHours, versionedRowStore } from '../../src/adapters/versioned-row-store.js';
import { fakeDataVersions } from '../helpers/fake-data-versions.js';

const closedVersion = async (versions: DataVersions, projectId: string) => (await versions.closedHours(projectId)).version;

/**
 * The three hash commands DataVersions uses, over one Map per key (`hash` is the default key's);
 * `refuse` makes writes or reads fail like a stopped Redis.
 */
function fakeRedis() {
  const hashes = new Map<string, Map<string, string>>();
  const hashOf = (key: string) => hashes.get(key) ?? hashes.set(key, new Map()).get(key)!;
  const refuse = { writes: false, reads: false };
  const down = () => Promise.reject(new Error('connection refused'));
  const redis = {
    hmget: (key: string, ...fields: string[]) => {
      if (refuse.reads) return down();
      const hash = hashOf(key);
      const found = fields.filter((f) => hash.has(f));
      return Promise.resolve(found.length === 0 ? null : Object.fromEntries(fields.map((f) => [f, hash.get(f) ?? null])));
    },
    hsetnx: (key: string, field: string, value: string) => {
      if (refuse.writes) return down();
      const hash = hashOf(key);
      if (hash.has(field)) return Promise.resolve(0);
      hash.set(field, value);
      return Promise.resolve(1);
    },
    hset: (key: string, fields: Record<string, string>) => {
      if (refuse.writes) return down();
      for (const [f, v] of Object.entries(fields)) hashOf(key).set(f, v);
      return Promise.resolve(Object.keys(fields).length);
    },
    hdel: (key: string, ...fields: string[]) => {
      if (refuse.writes) return down();
      return Promise.resolve(fields.filter((f) => hashOf(key).delete(f)).length);
    },
  };
  return { redis: redis as unknown as Redis, hash: hashOf(DATA_VERSION_KEY), hashes, refuse };
}

describe('data versions', () => {
  it('stays while nothing is written and moves for the written projects only', async () => {
    const { redis } = fakeRedis();
    const versions = redisDataVersions(redis);
    const [a, b] = [await versions.current('prj_a'), await versions.current('prj_b')];
    expect(await versions.current('prj_a')).toBe(a);
    await versions.moved(['prj_a']);
    expect(await versions.current('prj_a')).not.toBe(a);
    expect(await versions.current('prj_b')).toBe(b);
  });

  it('a write of unknown projects moves every project', async () => {
    const { redis } = fakeRedis();
    const versions = redisDataVersions(redis);
    const [a, b] = [await versions.current('prj_a'), await versions.current('prj_b')];
    await versions.moved('all');
    expect(await versions.current('prj_a')).not.toBe(a);
    expect(await versions.current('prj_b')).not.toBe(b);
  });

  it('a move Redis refuses moves this process’s own epoch instead, and does not throw', async () => {
    const lines: string[] = [];
    const { redis, refuse } = fakeRedis();
    const versions = redisDataVersions(redis, (line) => lines.push(line));
    const before = await versions.current('prj_a');
    refuse.writes = true;
    await expect(versions.moved(['prj_a'])).resolves.toBeUndefined();
    refuse.writes = false;
    expect(await versions.current('prj_a')).not.toBe(before);
    expect(lines.join('\n')).toMatch(/not moved in Redis/);
  });

  it('a refused move is made with the next move or read Redis accepts, so other instances learn of the write', async () => {
    const { redis, refuse } = fakeRedis();
    const writer = redisDataVersions(redis);
    const other = redisDataVersions(redis);
    const [a, b] = [await other.current('prj_a'), await other.current('prj_b')];
    refuse.writes = true;
    await writer.moved(['prj_a']);
    await writer.moved('all');
    refuse.writes = false;
    expect(await other.current('prj_a')).toBe(a);
    await writer.current('prj_z');
    expect(await other.current('prj_a')).not.toBe(a);
    expect(await other.current('prj_b')).not.toBe(b);
  });

  it('keeps the versions in DATA_VERSION_KEY unless given another key, whose versions are its own', async () => {
    const { redis, hashes } = fakeRedis();
    const shared = redisDataVersions(redis);
    const own = redisDataVersions(redis, undefined, 'dataversion:other-store');
    const [a, b] = [await shared.current('prj_a'), await own.current('prj_a')];
    expect([...hashes.keys()].sort()).toEqual([DATA_VERSION_KEY, 'dataversion:other-store']);
    await shared.moved('all');
    const sharedNow = await shared.current('prj_a');
    expect(sharedNow).not.toBe(a);
    expect(await own.current('prj_a')).toBe(b);
    await own.moved(['prj_a']);
    await own.moved('all');
    expect(await own.current('prj_a')).not.toBe(b);
    expect(await shared.current('prj_a')).toBe(sharedNow);
  });

  it('an unreadable version rejects (the caller then reuses nothing)', async () => {
    const { redis, refuse } = fakeRedis();
    refuse.reads = true;
    await expect(redisDataVersions(redis).current('prj_a')).rejects.toThrow();
  });

  it('the closed-hours version moves only with writes that may hold closed hours, and with every project’s', async () => {
    const { redis } = fakeRedis();
    const versions = redisDataVersions(redis);
    const [a, b] = [await closedVersion(versions, 'prj_a'), await closedVersion(versions, 'prj_b')];
    const current = await versions.current('prj_a');
    await versions.moved(['prj_a']);
    expect(await closedVersion(versions, 'prj_a')).toBe(a);
    expect(await versions.current('prj_a')).not.toBe(current);
    await versions.moved(['prj_a'], { closedHours: true });
    const a2 = await closedVersion(versions, 'prj_a');
    expect(a2).not.toBe(a);
    expect(await closedVersion(versions, 'prj_b')).toBe(b);
    await versions.moved('all');
    expect(await closedVersion(versions, 'prj_b')).toBe(b);
    await versions.moved('all', { closedHours: true });
    expect(await closedVersion(versions, 'prj_a')).not.toBe(a2);
    expect(await closedVersion(versions, 'prj_b')).not.toBe(b);
  });

  it('reads both versions of a project in one round trip, the same as apart', async () => {
    const { redis } = fakeRedis();
    const versions = redisDataVersions(redis);
    const [current, closedHours] = [await versions.current('prj_a'), await versions.closedHours('prj_a')];
    let reads = 0;
    const hmget = redis.hmget.bind(redis);
    (redis as unknown as { hmget: typeof hmget }).hmget = ((...args: Parameters<typeof hmget>) => (reads++, hmget(...args))) as typeof hmget;
    expect(await versions.both('prj_a')).toEqual({ current, closedHours, latestRow: null });
    expect(reads).toBe(1);
  });

  it('keeps a floorless mark for the closed-hours version it was measured at, and for no later one', async () => {
    const { redis, refuse } = fakeRedis();
    const versions = redisDataVersions(redis);
    const other = redisDataVersions(redis);
    const at = await versions.closedHours('prj_a');
    expect(at.floorlessFrom).toBeNull();
    await versions.markFloorless('prj_a', at.version, 1_772_000_000_123);
    expect(await other.closedHours('prj_a')).toEqual({ version: at.version, floorlessFrom: 1_772_000_000_123 });
    expect((await versions.both('prj_a')).closedHours.floorlessFrom).toBe(1_772_000_000_123);
    expect((await versions.closedHours('prj_b')).floorlessFrom).toBeNull();
    // Live traffic leaves it; a write that may hold closed hours (an import) moves the version, and the mark is gone.
    await versions.moved(['prj_a']);
    expect((await other.closedHours('prj_a')).floorlessFrom).toBe(1_772_000_000_123);
    await versions.moved(['prj_a'], { closedHours: true });
    expect((await other.closedHours('prj_a')).floorlessFrom).toBeNull();
    // Measured at the version before the move (a write landed meanwhile): never taken for the new one.
    await versions.markFloorless('prj_a', at.version, 1);
    expect((await other.closedHours('prj_a')).floorlessFrom).toBeNull();
    // Nor by a process whose move Redis refused.
    const moved = await other.closedHours('prj_a');
    await other.markFloorless('prj_a', moved.version, 2);
    expect((await versions.closedHours('prj_a')).floorlessFrom).toBe(2);
    refuse.writes = true;
    await versions.moved(['prj_a'], { closedHours: true });
    refuse.writes = false;
    // The writer takes the mark no more; its next read makes the move, and then nobody does.
    expect((await versions.closedHours('prj_a')).floorlessFrom).toBeNull();
    expect((await other.closedHours('prj_a')).floorlessFrom).toBeNull();
  });

  it('a closed-hours move Redis refused is made with the next one it accepts', async () => {
    const { redis, refuse } = fakeRedis();
    const other = redisDataVersions(redis);
    const versions = redisDataVersions(redis);
    const a = await closedVersion(other, 'prj_a');
    refuse.writes = true;
    await versions.moved(['prj_a'], { closedHours: true });
    await versions.moved(['prj_b']);
    refuse.writes = false;
    await versions.moved(['prj_c']);
    // Another instance sees the move that was refused.
    expect(await closedVersion(other, 'prj_a')).not.toBe(a);
  });

  it('forgets a deleted project’s fields and no other project’s; a later read starts from a new token', async () => {
    const { redis, hash } = fakeRedis();
    const versions = redisDataVersions(redis);
    const before = await versions.both('prj_a');
    await versions.markFloorless('prj_a', before.closedHours.version, 5);
    const b = await versions.both('prj_b');
    await versions.forget(['prj_a']);
    expect([...hash.keys()].filter((f) => f.includes('prj_a'))).toEqual([]);
    expect(await versions.both('prj_b')).toEqual(b);
    const after = await versions.both('prj_a');
    expect(after.current).not.toBe(before.current);
    expect(after.closedHours).toEqual({ version: expect.not.stringMatching(before.closedHours.version), floorlessFrom: null });
  });

  it('a version lost from Redis comes back as a new token, never an old one', async () => {
    const { redis, hash } = fakeRedis();
    const versions = redisDataVersions(redis);
    const seen = new Set([await versions.current('prj_a')]);
    for (let i = 0; i < 5; i++) {
      hash.clear();
      const next = await versions.current('prj_a');
      expect(seen.has(next)).toBe(false);
      seen.add(next);
    }
  });
});

describe('the projects an insert writes', () => {
  it('reads them from row objects or the encoder’s list; unknown means every project', () => {
    expect(projectsOf([{ project_id: 'prj_a' }, { project_id: 'prj_b' }, { project_id: 'prj_a' }])).toEqual(['prj_a', 'prj_b']);
    expect(projectsOf([{ project_id: 'prj_a' }, { ts: 1 }])).toBe('all');
    const body = '{"ts":"2026-01-01 00:00:00.000"}\n';
    expect(projectsOf(new EncodedRows({ body, columns: ['ts'], projectIds: ['prj_d'] }))).toEqual(['prj_d']);
    expect(projectsOf(new EncodedRows({ body, columns: ['ts'] }))).toBe('all');
  });

  it('moves them after the insert, and nothing when the insert fails', async () => {
    const moved: (readonly string[] | 'all')[] = [];
    let fail = false;
    const store = versionedRowStore(
      { insert: async () => { if (fail) throw new Error('refused'); }, ping: async () => true },
      fakeDataVersions(undefined, async (ids) => void moved.push(ids)),
      fixedClock(0),
    );
    await store.insert('events', [{ project_id: 'prj_a' }]);
    fail = true;
    await expect(store.insert('events', [{ project_id: 'prj_b' }])).rejects.toThrow('refused');
    expect(moved).toEqual([['prj_a']]);
  });

  it('moves their closed-hours versions when the events may hold rows before the clock’s UTC hour', async () => {
    const closed: boolean[] = [];
    const clock = fixedClock(Date.parse('2026-03-08T12:00:05Z'));
    const store = versionedRowStore(
      { insert: async () => {}, ping: async () => true },
      fakeDataVersions(undefined, async (_, opts) => void closed.push(opts?.closedHours === true)),
      clock,
    );
    const thisHour = '2026-03-08 12:00:01.000';
    const lastHour = '2026-03-08 11:59:59.999';
    const floor = 1_772_966_400;
    await store.insert('events', [{ project_id: 'p', ts: thisHour, session_floor: floor }]);
    await store.insert('events', [{ project_id: 'p', ts: thisHour, session_floor: floor }, { project_id: 'p', ts: lastHour, session_floor: floor }]);
    await store.insert('events', new EncodedRows({ body: '{}\n', columns: ['ts'], projectIds: ['p'], earliest: thisHour }));
    await store.insert('events', new EncodedRows({ body: '{}\n', columns: ['ts'], projectIds: ['p'], earliest: lastHour }));
    // Unknown: an import's rows, a replayed batch.
    await store.insert('events', new EncodedRows({ body: '{}\n', columns: ['ts'], projectIds: ['p'] }));
    // Bot hits are not what visits are summed from.
    await store.insert('bot_hits', [{ project_id: 'p', ts: lastHour }]);
    // An event without a session floor: its visit may reach back into closed hours.
    await store.insert('events', [{ project_id: 'p', ts: thisHour, session_floor: floor }, { project_id: 'p', ts: thisHour, session_floor: 0 }]);
    await store.insert('events', [{ project_id: 'p', ts: thisHour }]);
    expect(closed).toEqual([false, true, false, true, true, false, true, true]);
  });

  it('reads the earliest stamp from row objects or the encoder; any row without one, or event without a session floor, makes it unknown', () => {
    const floored = (ts: unknown) => ({ ts, session_floor: 1 });
    expect(earliestOf('events', [floored('2026-03-08 10:00:00.000'), floored('2026-03-07 10:00:00.000'), floored('2026-03-09 00:00:00.000')])).toBe('2026-03-07 10:00:00.000');
    expect(earliestOf('events', [floored('2026-03-08 10:00:00.000'), floored(5)])).toBeUndefined();
    expect(earliestOf('events', [floored('2026-03-08 10:00:00.000'), { ts: '2026-03-08 11:00:00.000' }])).toBeUndefined();
    expect(earliestOf('bot_hits', [{ ts: '2026-03-08 10:00:00.000' }])).toBe('2026-03-08 10:00:00.000');
    expect(touchesClosedHours('events', [{ ts: 'garbage' }], Date.parse('2026-03-08T12:00:00Z'))).toBe(true);
  });
});
