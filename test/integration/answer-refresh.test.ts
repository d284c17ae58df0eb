import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withQuery, type ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { coalescedReads, isBackground } from '../../src/adapters/coalesced-reads.js';
import { redisDataVersions } from '../../src/adapters/data-version.js';
import { versionedRowStore } from '../../src/adapters/versioned-row-store.js';
import type { Deps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import type { Project } from '../../src/projects/store.js';
import { AnswerCache } from '../../src/reports/answer-cache.js';
import { queryRows } from '../../src/reports/query.js';
import { findReport } from '../../src/reports/registry.js';
import { closeHarness, createHarness, TEST_DATA_VERSION_KEY, type Harness } from '../helpers/harness.js';
import { chTime, seededRandom } from '../helpers/report-fixtures.js';

/**
 * Answers kept fresh (src/reports/answer-refresh.ts): after a write, the questions asked of the
 * project lately are answered again in the background through the answer cache, so the next
 * asker is served — and what it is served is always what an uncached computation answers.
 */
const MINUTE = 60_000;
const DAY = 86_400_000;
// Not on a whole second: answers at a whole second are never kept.
const clock = fixedClock(Date.parse('2026-11-24T09:05:00.000Z') + 613);
let h: Harness;
let cache: AnswerCache;
let deps: Deps;
const projectOf = (domain: string): Project => ({
  id: newId('project'), name: domain, domain, timeZone: 'UTC', publicStatsEnabled: false,
  brandColor: null, icon: null, createdAt: '2026-01-01T00:00:00.000Z', ownerId: newId('account'),
});
const project = projectOf('refresh.example');
const other = projectOf('refresh-other.example');

async function ask(name: string, query: Record<string, string>, via: Deps = deps, of: Project = project) {
  const def = findReport(name)!;
  return JSON.parse(JSON.stringify(await def.run({ deps: via, project: of, role: 'owner' }, v.parse(def.query, query) as never)));
}
const uncached = (name: string, query: Record<string, string>) => ask(name, query, { ...h.deps, answers: undefined });
const uncached24h = (of: Project) => ask('stats', { period: '24h' }, { ...h.deps, answers: undefined }, of);

let visitor = 0;
const pageview = (ts: number, of: Project = project, path = '/') => ({
  project_id: of.id, ts: chTime(ts), kind: 'pageview', visitor_id: ++visitor, session_id: visitor, path, referrer_source: visitor % 2 ? 'news.example' : '',
  browser: visitor % 3 ? 'Firefox' : 'Chrome', country_code: 'DE',
});
const write = (rows: ReturnType<typeof pageview>[]) => deps.rowStore.insert('events', rows);
const counts = () => ({ ...cache.counts });
const refreshed = () => cache.refresher!.counts.refreshed;

beforeAll(async () => {
  h = await createHarness({ clock });
  const versions = redisDataVersions(h.deps.redis, undefined, TEST_DATA_VERSION_KEY);
  cache = new AnswerCache(versions, undefined, { watchMs: 10 * MINUTE, clock });
  deps = { ...h.deps, answers: cache, rowStore: versionedRowStore(h.deps.rowStore, versions, clock, (projects) => cache.written(projects)), dataVersions: versions };
  await write(Array.from({ length: 30 }, (_, i) => pageview(clock.now() - (i % 10) * DAY - (i + 1) * MINUTE, project, `/p${i % 4}`)));
  await cache.refresher!.settled();
});
afterAll(async () => {
  await cache.close();
  await closeHarness();
});

describe('answers kept fresh after a write', () => {
  const questions: [string, Record<string, string>][] = [['stats', { period: '30d' }], ['pages', { period: '7d' }], ['devices', { period: '30d' }]];

  it('answers the questions asked lately again after a write, so the next asker is served the new answer', async () => {
    for (const [name, query] of questions) await ask(name, query);
    const before = counts();
    const refreshedBefore = refreshed();
    await write([pageview(clock.now() - 5000, project, '/fresh')]);
    await cache.refresher!.settled();
    expect(refreshed()).toBe(refreshedBefore + questions.length);
    clock.advance(1200);
    for (const [name, query] of questions) expect(await ask(name, query), name).toEqual(await uncached(name, query));
    // Every answer was computed by the refresher; the askers were served.
    expect(counts()).toEqual({ computed: before.computed + questions.length, reused: before.reused + questions.length });
    expect((await ask('pages', { period: '7d' })).data.map((p: { path: string }) => p.path)).toContain('/fresh');
  });

  it("another project's write refreshes nothing of this one", async () => {
    await ask('stats', { period: '30d' });
    const before = refreshed();
    await write([pageview(clock.now() - 4000, other)]);
    await cache.refresher!.settled();
    expect(refreshed()).toBe(before);
  });

  it('keeps 24h fresh where its start passes few events (at most 180 in its 15-minute cell), not where it passes many', async () => {
    const quiet = projectOf('quiet-24h.example');
    const busy = projectOf('busy-24h.example');
    // Ten minutes into a cell: the rows below, a second apart from the start cell's start, all lie before the range's start.
    clock.set(Math.ceil(clock.now() / (15 * MINUTE)) * 15 * MINUTE + 10 * MINUTE + 613);
    const startCell = Math.floor(clock.now() / (15 * MINUTE)) * 15 * MINUTE - DAY;
    const rowsInStartCell = (n: number, of: Project) => Array.from({ length: n }, (_, i) => pageview(startCell + i * 1000 + 7, of));
    await write([...rowsInStartCell(180, quiet), ...rowsInStartCell(181, busy)]);
    await cache.refresher!.settled();
    const watching = cache.refresher!.watching;
    await ask('stats', { period: '24h' }, deps, quiet);
    await ask('stats', { period: '24h' }, deps, busy);
    // Watched once their start cell is read, beside the answer.
    await vi.waitFor(() => expect(cache.refresher!.watching).toBeGreaterThan(watching), { timeout: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cache.refresher!.watching).toBe(watching + 1);
    const before = refreshed();
    await write([pageview(clock.now() - 2000, quiet), pageview(clock.now() - 2000, busy)]);
    await cache.refresher!.settled();
    expect(refreshed()).toBe(before + 1);
    clock.advance(700);
    const c = counts();
    expect(await ask('stats', { period: '24h' }, deps, quiet)).toEqual(await uncached24h(quiet));
    expect(counts().reused).toBe(c.reused + 1);
  });

  it('a question not asked for longer than the watch is not refreshed any more', async () => {
    await ask('countries', { period: '30d' });
    clock.advance(11 * MINUTE);
    // Keep the others watched; only countries has gone unasked for 11 minutes.
    for (const [name, query] of questions) await ask(name, query);
    const before = refreshed();
    await write([pageview(clock.now() - 3000)]);
    await cache.refresher!.settled();
    expect(refreshed()).toBe(before + questions.length);
    const c = counts();
    clock.advance(900);
    await ask('countries', { period: '30d' });
    expect(counts().computed).toBe(c.computed + 1);
  });

  it("refreshes at its own clock, not the asker's (an export pins its clock): the next asker is served", async () => {
    const pinnedAt = clock.now();
    const pinned = { ...deps, clock: { now: () => pinnedAt } };
    await ask('cities', { period: '30d' }, pinned);
    clock.advance(2 * MINUTE);
    await write([pageview(clock.now() - 2500, project, '/pinned')]);
    await cache.refresher!.settled();
    const c = counts();
    clock.advance(700);
    expect(await ask('cities', { period: '30d' })).toEqual(await uncached('cities', { period: '30d' }));
    expect(counts().reused).toBe(c.reused + 1);
  });

  it("gives way to a user's question: nothing is refreshed while one is being answered", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Another project's question, so the refresh of this one cannot merely be waiting for it as its own.
    const slow = cache.answer(deps, { name: 'held', project: other, input: { period: '7d' } }, async () => {
      await held;
      return 1;
    });
    const before = refreshed();
    await write([pageview(clock.now() - 2000)]);
    await new Promise((r) => setTimeout(r, 300));
    expect(refreshed()).toBe(before);
    release();
    expect(await slow).toBe(1);
    await cache.refresher!.settled();
    expect(refreshed()).toBeGreaterThan(before);
  });

  it('a question whose refresh fails is no longer watched', async () => {
    let calls = 0;
    const failing = () =>
      cache.answer(deps, { name: 'fails-later', project, input: { period: '30d' } }, async () => {
        if (++calls > 1) throw new Error('refused');
        return calls;
      });
    expect(await failing()).toBe(1);
    const failed = cache.refresher!.counts.failed;
    await write([pageview(clock.now() - 1500)]);
    await cache.refresher!.settled();
    expect(cache.refresher!.counts.failed).toBe(failed + 1);
    await write([pageview(clock.now() - 1400)]);
    await cache.refresher!.settled();
    expect(cache.refresher!.counts.failed).toBe(failed + 1);
    expect(calls).toBe(2);
  });

  /**
   * A cache of its own over an engine that can be held (while held, the reads sent queue in the
   * coalescing client; the statements that reach the engine are recorded as they are sent), whose
   * questions each send one read told apart by the column it names. Question `refreshed` is asked,
   * the engine held and a row written: resolves once the refresh's read waits in the queue.
   */
  async function refreshingOnHeldEngine(writtenAgoMs: number) {
    const versions = redisDataVersions(h.deps.redis, undefined, TEST_DATA_VERSION_KEY);
    let open = true;
    let release = () => {};
    const sent: string[] = [];
    const engine = withQuery(h.deps.clickhouse, async (params) => {
      sent.push(params.query);
      if (!open) await new Promise<void>((resolve) => (release = resolve));
      return h.deps.clickhouse.query(params);
    });
    const own = new AnswerCache(versions, undefined, { watchMs: 10 * MINUTE, clock });
    const ownDeps: Deps = { ...deps, clickhouse: coalescedReads(engine), answers: own, rowStore: versionedRowStore(h.deps.rowStore, versions, clock, (projects) => own.written(projects)) };
    /** The client each question last computed with, and a wait for its next computation's read to be sent. */
    const computedWith: Record<string, ClickHouseClient> = {};
    const waiters: Record<string, () => void> = {};
    const computed = (name: string) => new Promise<void>((resolve) => (waiters[name] = resolve));
    const question = (name: string) =>
      own.answer(ownDeps, { name, project, input: { period: '7d' } }, async (d) => {
        computedWith[name] = d.clickhouse;
        const rows = queryRows(d, `SELECT {n:UInt8} AS ${name}_read`, { n: 1 }, {});
        waiters[name]?.();
        await rows;
        return name;
      });
    /** Asks a question not asked before: resolves, once its read waits, to its answer's promise. */
    const askedAndWaiting = async (name: string) => {
      const waiting = computed(name);
      const answer = question(name);
      await waiting;
      return { answer };
    };

    await question('refreshed');
    open = false;
    // A read of no question takes the engine and waits there; every read after it queues.
    void queryRows(ownDeps, 'SELECT {n:UInt8} AS holding', { n: 1 }, {});
    const refreshing = computed('refreshed');
    await ownDeps.rowStore.insert('events', [pageview(clock.now() - writtenAgoMs)]);
    await refreshing;
    /** Lets the held statement run; returns how many statements were sent before. */
    const released = () => {
      const before = sent.length;
      open = true;
      release();
      return before;
    };
    return { own, sent, computedWith, question, askedAndWaiting, released };
  }

  it("sends a refresh's reads after the user's reads waiting, never in one statement with them", async () => {
    const e = await refreshingOnHeldEngine(900);
    expect(isBackground(e.computedWith.refreshed!)).toBe(true);
    const users = await e.askedAndWaiting('users');
    const from = e.released();
    expect(await users.answer).toBe('users');
    await e.own.refresher!.settled();
    const order = e.sent.slice(from);
    const usersAt = order.findIndex((sql) => sql.includes('users_read'));
    const refreshedAt = order.findIndex((sql) => sql.includes('refreshed_read'));
    expect(usersAt).toBeGreaterThanOrEqual(0);
    expect(refreshedAt).toBeGreaterThan(usersAt);
    expect(e.own.refresher!.counts.refreshed).toBe(1);
    await e.own.close();
  });

  it('sends a refresh as a user’s once a user asks the question being refreshed', async () => {
    const e = await refreshingOnHeldEngine(800);
    const joined = e.question('refreshed');
    await vi.waitFor(() => expect(isBackground(e.computedWith.refreshed!)).toBe(false));
    const users = await e.askedAndWaiting('users');
    const from = e.released();
    expect([await joined, await users.answer]).toEqual(['refreshed', 'users']);
    // One statement holds both: the joined refresh's read went as a user's.
    expect(e.sent.slice(from).some((sql) => sql.includes('users_read') && sql.includes('refreshed_read'))).toBe(true);
    await e.own.close();
  });

  it('what a refreshed cache serves equals an uncached computation through random writes, clock moves and questions', async () => {
    const r = seededRandom(20261126);
    const walk: [string, Record<string, string>][] = [
      ['stats', { period: '30d' }], ['stats', { period: 'today' }], ['timeseries', { period: '7d' }], ['pages', { period: '30d' }],
      ['referrers', { period: '30d' }], ['browsers', { period: '30d' }], ['countries', { period: '7d' }], ['events', { period: 'today' }],
    ];
    const before = { reused: cache.counts.reused, refreshed: refreshed() };
    for (let step = 0; step < 50; step++) {
      const roll = r.next();
      if (roll < 0.3) {
        // Mostly live rows; now and then one stamped a little ahead (an import), which must never be counted early.
        const ahead = r.next() < 0.15 ? r.int(1, 30) * MINUTE : -r.int(1, 300) * 1000;
        await write([pageview(clock.now() + ahead, project, `/w${r.int(0, 3)}`)]);
        // Sometimes the next question races the refresh, sometimes it comes after it.
        if (r.next() < 0.5) await cache.refresher!.settled();
      } else if (roll < 0.5) {
        clock.advance(r.int(1, 20 * MINUTE));
      }
      const [name, query] = walk[r.int(0, walk.length - 1)]!;
      expect(await ask(name, query), `step ${step}: ${name} ${JSON.stringify(query)}`).toEqual(await uncached(name, query));
    }
    await cache.refresher!.settled();
    // The walk must have been served refreshed answers, or it tested nothing of the refresher.
    expect(refreshed() - before.refreshed).toBeGreaterThan(10);
    expect(cache.counts.reused - before.reused).toBeGreaterThan(3);
  }, 120_000);
});
