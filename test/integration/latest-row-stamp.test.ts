import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Redis } from '@upstash/redis';
import { withQuery } from '../../src/adapters/clickhouse.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { redisDataVersions, type DataVersions } from '../../src/adapters/data-version.js';
import { EncodedRows } from '../../src/adapters/row-store.js';
import { connectRespRedis, type RespRedis } from '../../src/adapters/redis-resp.js';
import { versionedRowStore } from '../../src/adapters/versioned-row-store.js';
import type { Deps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import type { Project } from '../../src/projects/store.js';
import { importNdjson } from '../../src/ingest/import.js';
import { findReport } from '../../src/reports/registry.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, TEST_REDIS_URL, unique, type Harness } from '../helpers/harness.js';
import { chTime } from '../helpers/report-fixtures.js';

/**
 * The latest-row stamp kept with each project's data version (src/adapters/data-version.ts),
 * through the real Redis scripts, and the reports that read it instead of asking ClickHouse
 * whether rows are stored after now (src/reports/latest-row.ts).
 */
let resp: RespRedis;
const keys: string[] = [];
/** Fresh versions under a key of their own; `refuse` makes every write fail as a stopped Redis would. */
const fresh = (key = `dataversion:stamp:${unique()}`) => {
  keys.push(key);
  const refuse = { writes: false };
  const redis = new Proxy(resp.redis, {
    get(target, name, receiver) {
      if (refuse.writes && (name === 'hset' || name === 'eval')) return () => Promise.reject(new Error('connection refused'));
      const value = Reflect.get(target, name, receiver) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Redis;
  return { versions: redisDataVersions(redis, () => {}, key), key, refuse };
};
const stampOf = async (versions: DataVersions, id: string) => (await versions.both(id)).latestRow;
const latest = (ms: number) => new Map([['prj_a', ms]]);

beforeAll(async () => {
  resp = await connectRespRedis({ url: TEST_REDIS_URL });
});
afterAll(async () => {
  if (keys.length > 0) await resp.redis.del(...keys);
  await resp.close();
});

describe('latest-row stamps in Redis', () => {
  it('keeps a stamp only for the version it was read at, and raises it, never lowers it', async () => {
    const { versions, key } = fresh();
    const other = redisDataVersions(resp.redis, () => {}, key);
    const before = (await versions.both('prj_a')).current;
    expect(await stampOf(versions, 'prj_a')).toBeNull();
    await versions.markLatestRow('prj_a', before, 1_000);
    expect(await stampOf(other, 'prj_a')).toBe(1_000);
    await versions.markLatestRow('prj_a', before, 900);
    expect(await stampOf(other, 'prj_a')).toBe(1_000);
    await versions.markLatestRow('prj_a', before, 1_500);
    expect(await stampOf(other, 'prj_a')).toBe(1_500);
    expect(await stampOf(other, 'prj_b')).toBeNull();
    // Read before a write moved the version (without carrying it): never taken for the new version.
    await versions.moved(['prj_a']);
    await versions.markLatestRow('prj_a', before, 2_000);
    expect(await stampOf(other, 'prj_a')).toBeNull();
    // Unknown never stamps.
    await versions.markLatestRow('prj_a', (await versions.both('prj_a')).current, Number.POSITIVE_INFINITY);
    expect(await stampOf(other, 'prj_a')).toBeNull();
  });

  it('a write carries the stamp to its version, raised to its rows’ latest; a late mark of the version before does not undo it', async () => {
    const { versions } = fresh();
    const before = (await versions.both('prj_a')).current;
    await versions.markLatestRow('prj_a', before, 5_000);
    await versions.moved(['prj_a', 'prj_b'], { latestRows: new Map([['prj_a', 4_000], ['prj_b', 9_000]]) });
    const after = await versions.both('prj_a');
    expect(after.current).not.toBe(before);
    expect(after.latestRow).toBe(5_000);
    // prj_b had no stamp to carry.
    expect(await stampOf(versions, 'prj_b')).toBeNull();
    await versions.moved(['prj_a'], { latestRows: latest(7_000), closedHours: true });
    expect(await stampOf(versions, 'prj_a')).toBe(7_000);
    await versions.markLatestRow('prj_a', before, 1);
    expect(await stampOf(versions, 'prj_a')).toBe(7_000);
  });

  it('a write without its rows’ latest, a write of unknown projects, or a move Redis refused first drops the stamp; another project’s write leaves it', async () => {
    const { versions, refuse } = fresh();
    const stamp = async () => versions.markLatestRow('prj_a', (await versions.both('prj_a')).current, 1_000);
    await stamp();
    await versions.moved(['prj_b'], { latestRows: new Map([['prj_b', 5]]) });
    expect(await stampOf(versions, 'prj_a')).toBe(1_000);
    await versions.moved(['prj_a']);
    expect(await stampOf(versions, 'prj_a')).toBeNull();
    await stamp();
    await versions.moved('all');
    expect(await stampOf(versions, 'prj_a')).toBeNull();
    await stamp();
    refuse.writes = true;
    await versions.moved(['prj_a'], { latestRows: latest(2_000) });
    refuse.writes = false;
    // The refused write's rows never reached the stamp: the move made with the next one drops it, even when that one carries.
    await versions.moved(['prj_a'], { latestRows: latest(3_000) });
    expect(await stampOf(versions, 'prj_a')).toBeNull();
  });

  it('moves made late after a long outage carry no stamp, and are made: more fields than one script call takes', async () => {
    const { versions, key, refuse } = fresh();
    const other = redisDataVersions(resp.redis, () => {}, key);
    const ids = Array.from({ length: 4_500 }, (_, i) => `prj_waiting${i}`);
    const before = await other.current(ids[4_499]!);
    await versions.markLatestRow('prj_a', (await versions.both('prj_a')).current, 1_000);
    refuse.writes = true;
    for (const id of ids) await versions.moved([id]);
    refuse.writes = false;
    await versions.moved(['prj_a'], { latestRows: latest(2_000) });
    expect(await other.current(ids[4_499]!)).not.toBe(before);
    expect(await stampOf(other, 'prj_a')).toBeNull();
  });

  it('is forgotten with the project', async () => {
    const { versions } = fresh();
    await versions.markLatestRow('prj_a', (await versions.both('prj_a')).current, 1_000);
    await versions.forget(['prj_a']);
    expect(await stampOf(versions, 'prj_a')).toBeNull();
  });

  it('the versioned row store carries each project’s own latest, and an encoder’s latest for every project of its rows', async () => {
    const { versions } = fresh();
    const store = versionedRowStore({ insert: async () => {}, ping: async () => true }, versions, fixedClock(0));
    for (const id of ['prj_a', 'prj_b']) await versions.markLatestRow(id, (await versions.both(id)).current, 10);
    await store.insert('events', [
      { project_id: 'prj_a', ts: '2026-03-08 12:00:01.000' },
      { project_id: 'prj_a', ts: '2026-03-08 12:00:03.500' },
      { project_id: 'prj_b', ts: '2026-03-08 11:00:00.000' },
    ]);
    expect(await stampOf(versions, 'prj_a')).toBe(Date.parse('2026-03-08T12:00:03.500Z'));
    expect(await stampOf(versions, 'prj_b')).toBe(Date.parse('2026-03-08T11:00:00.000Z'));
    await store.insert('events', new EncodedRows({ body: '{}\n', columns: ['ts'], projectIds: ['prj_a', 'prj_b'], latest: '2026-03-08 13:00:00.000' }));
    expect(await stampOf(versions, 'prj_b')).toBe(Date.parse('2026-03-08T13:00:00.000Z'));
    // A row without a stamp of its own makes its project's latest unknown.
    await store.insert('events', [{ project_id: 'prj_a', ts: '2026-03-08 14:00:00.000' }, { project_id: 'prj_a' }, { project_id: 'prj_b', ts: '2026-03-08 14:00:00.000' }]);
    expect(await stampOf(versions, 'prj_a')).toBeNull();
    expect(await stampOf(versions, 'prj_b')).toBe(Date.parse('2026-03-08T14:00:00.000Z'));
    // An import's rows (the encoder kept no latest).
    await store.insert('events', new EncodedRows({ body: '{}\n', columns: ['ts'], projectIds: ['prj_b'] }));
    expect(await stampOf(versions, 'prj_b')).toBeNull();
  });
});

describe('reports read the stamp instead of asking ClickHouse', () => {
  const NOW = Date.parse('2026-05-20T10:20:00.000Z');
  const clock = fixedClock(NOW);
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ clock });
  });
  afterAll(closeHarness);

  const stats = findReport('stats')!;
  const input = v.parse(stats.query, { period: '7d' }) as never;
  /** The stats answer computed without the answer cache, and whether a rows-after-now check went to ClickHouse. */
  const ask = async (project: Project) => {
    const sent: string[] = [];
    const clickhouse = withQuery(h.deps.clickhouse, (params) => (sent.push(params.query), h.deps.clickhouse.query(params)));
    const deps: Deps = { ...h.deps, clickhouse, answers: undefined };
    const answer = (await stats.run({ deps, project, role: 'owner' }, input)) as { pageviews: number };
    return { pageviews: answer.pageviews, checked: sent.some((q) => q.includes('AS latest, count() AS n')) };
  };

  it('reads the latest row once per version and stamps it; a live batch carries it, raised past now, and the period is cut at now', async () => {
    const project: Project = {
      id: newId('project'), name: 'Stamp', domain: `${unique('stamp')}.example`, timeZone: 'UTC', publicStatsEnabled: false,
      brandColor: null, icon: null, createdAt: '2026-01-01T00:00:00.000Z', ownerId: newId('account'),
    };
    await insertEvents(h.deps.rowStore, project.id, [makeEvent({ ts: NOW - 86_400_000 }), makeEvent({ ts: NOW - 60_000, visitor: 2 })]);
    expect(await ask(project)).toEqual({ pageviews: 2, checked: true });
    // The stamp is written after the answer, without holding it.
    await vi.waitFor(async () => expect((await h.deps.dataVersions!.both(project.id)).latestRow).toBe(NOW - 60_000));
    expect(await ask(project)).toEqual({ pageviews: 2, checked: false });
    // A batch as the batcher seals it: the rows' latest kept by the encoder, one event a minute after now.
    const row = (ts: number, visitor: number) => JSON.stringify({ project_id: project.id, ts: chTime(ts), kind: 'pageview', visitor_id: visitor, session_id: visitor, path: '/' });
    const body = `${row(NOW - 1_000, 3)}\n${row(NOW + 60_000, 4)}\n`;
    await h.deps.rowStore.insert('events', new EncodedRows({ body, columns: ['project_id', 'ts', 'kind', 'visitor_id', 'session_id', 'path'], projectIds: [project.id], latest: chTime(NOW + 60_000) }));
    expect((await h.deps.dataVersions!.both(project.id)).latestRow).toBe(NOW + 60_000);
    expect(await ask(project)).toEqual({ pageviews: 3, checked: false });
  });

  it('an import carries the stamp too, raised to its latest line’s timestamp in every block', async () => {
    const project: Project = {
      id: newId('project'), name: 'Import stamp', domain: `${unique('import-stamp')}.example`, timeZone: 'UTC', publicStatsEnabled: false,
      brandColor: null, icon: null, createdAt: '2026-01-01T00:00:00.000Z', ownerId: newId('account'),
    };
    await insertEvents(h.deps.rowStore, project.id, [makeEvent({ ts: NOW - 3_600_000 })]);
    await h.deps.dataVersions!.markLatestRow(project.id, (await h.deps.dataVersions!.both(project.id)).current, NOW - 3_600_000);
    const line = (ms: number, i: number) => JSON.stringify({ timestamp: new Date(ms).toISOString(), kind: 'pageview', visitorId: `v${i}`, sessionId: 's', url: `https://${project.domain}/` });
    const lines = [line(NOW - 7_200_000, 1), line(NOW + 7_200_000, 2), line(NOW - 60_000, 3), line(NOW - 1_000, 4)];
    // Two rows a block: the later block's rows end before the import's latest, and the stamp keeps the highest.
    const result = await importNdjson(h.deps.rowStore, new Response(`${lines.join('\n')}\n`).body!, { project, batchRows: 2 });
    expect(result).toMatchObject({ imported: 4, rejected: 0 });
    expect((await h.deps.dataVersions!.both(project.id)).latestRow).toBe(NOW + 7_200_000);
    // The row two hours after now is cut, without a check.
    expect(await ask(project)).toEqual({ pageviews: 4, checked: false });
  });
});
