import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Background } from '../../src/adapters/background.js';
import { withQuery } from '../../src/adapters/clickhouse.js';
import type { Deps } from '../../src/deps.js';
import { getProject } from '../../src/projects/store.js';
import { WARM_UP_PERIODS, WARM_UP_PROJECT_ID, WARM_UP_ROUNDS, WARM_UP_VARIANTS, warmUpReports } from '../../src/reports/engine-warm-up.js';
import { findReport } from '../../src/reports/registry.js';
import { insertEvents, makeEvent, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, countEvents, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The reports a dashboard shows, each asked with a period alone. */
const DASHBOARD = ['stats', 'timeseries', 'pages', 'referrers', 'countries', 'cities', 'devices', 'browsers', 'os', 'events', 'visitors', 'performance'];

let h: Harness;
let alice: TestUser;
beforeAll(async () => {
  h = await createHarness();
  alice = await h.user('warm-up');
});
afterAll(closeHarness);

/** How many functions the engine has compiled in this process (each test file is a process of its own). */
async function compiledFunctions(deps: Deps): Promise<number> {
  const rs = await deps.clickhouse.query({ query: "SELECT sum(value) AS n FROM system.events WHERE event = 'CompileFunction'", format: 'JSONEachRow' });
  const [row] = await rs.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

/** Visits over the last 40 days and today's hours: pageviews, leaves, custom events and vitals. */
function visits(now: number): GenEvent[] {
  const events: GenEvent[] = [];
  for (let i = 0; i < 120; i++) {
    const ts = now - ((i * 7_919_000) % (40 * DAY)) - MINUTE;
    const common = { visitor: 1 + (i % 23), session: 1_000 + i, path: ['/', '/pricing', '/blog/a'][i % 3]!, referrerSource: i % 2 ? 'google.com' : '(direct)' };
    events.push(makeEvent({ ts, ...common }));
    if (i % 3 === 0) events.push(makeEvent({ ts: ts + 1000, kind: 'leave', durationMs: 30_000, ...common }));
    if (i % 4 === 0) events.push(makeEvent({ ts: ts + 2000, kind: 'custom', eventName: 'signup', ...common }));
    if (i % 5 === 0) events.push(makeEvent({ ts: ts + 3000, kind: 'vitals', ...common }));
  }
  return events;
}

describe('engine warm-up', () => {
  it('compiles what a dashboard needs, so a user asking afterwards pays no compilation', async () => {
    const domain = h.domain('warm');
    const res = await h.call('POST', '/api/v1/projects', { token: alice.writeKey, body: { name: 'Warm', domain, timeZone: 'UTC' } });
    const { id } = (await res.json()) as { id: string };
    await insertEvents(h.deps.rowStore, id, visits(h.deps.clock.now()));
    const project = (await getProject(h.deps.redis, id))!;

    const before = await compiledFunctions(h.deps);
    const result = await warmUpReports(h.deps);
    expect(result.error).toBeUndefined();
    // Each round: every dashboard report and goals and bots for each period, and for each variant the
    // reports that take it (13 for a filter: all but bots; 10 for a comparison: not goals, bots,
    // visitors or performance).
    expect(result.asked).toBeGreaterThanOrEqual(WARM_UP_ROUNDS * (WARM_UP_PERIODS.length + WARM_UP_VARIANTS.length) * DASHBOARD.length);
    const warmed = await compiledFunctions(h.deps);
    // Without the warm-up, these compilations would fall in the user's asks below.
    expect(warmed).toBeGreaterThan(before);

    // A user's asks computed (no answer cache), each report five times at each warmed period and at
    // 7d and 90d. What an ask leaves to the background (storing the project's parts, once per part)
    // runs after the ask is counted: it may compile, no user waits for it.
    const deferred: (() => Promise<unknown>)[] = [];
    const background: Background = { run: (_key, task) => void deferred.push(task), settled: async () => {} };
    const computed = { ...h.deps, answers: undefined, background };
    /** Functions the engine compiled during the asks of each of `queries`, the dashboard's reports five times each. */
    const compiledDuring = async (queries: Record<string, string>[]) => {
      let compiled = 0;
      for (const query of queries) {
        for (const name of DASHBOARD) {
          const def = findReport(name)!;
          // As the report's route parses its query string.
          const input = v.parse(def.query, query);
          for (let i = 0; i < 5; i++) {
            const before = await compiledFunctions(h.deps);
            await def.run({ deps: computed, project, role: 'owner' }, input as never);
            compiled += (await compiledFunctions(h.deps)) - before;
            for (const task of deferred.splice(0)) await task();
          }
        }
      }
      return compiled;
    };
    expect(await compiledDuring([...WARM_UP_PERIODS, '7d', '90d'].map((period) => ({ period })))).toBe(0);
    // Filtered and compared, with other values and dimensions than the warm-up's own, at another
    // period. 33 functions were compiled here without the variants, 4 with them alone and 5 in a
    // loaded CI run: reads that only a project with rows makes, which the warm-up's empty project
    // cannot (the visit pass pre-filtered by the visits that match, a comparison's second read of
    // the rows it ranked), and how many varies with load. The bound is a quarter of the 33.
    const narrowed: Record<string, string>[] = [{ filters: 'country==DE' }, { filters: 'browser==Firefox' }, { filters: 'source==google.com' }, { filters: 'page==/pricing' }, { compare: 'previous_period' }];
    expect(await compiledDuring(narrowed.map((variant) => ({ period: '7d', ...variant })))).toBeLessThanOrEqual(8);
  }, 180_000);

  it('writes no events and answers nothing into the answer cache', async () => {
    expect(await countEvents(h, WARM_UP_PROJECT_ID)).toBe(0);
    const computedBefore = h.deps.answers!.counts.computed;
    await warmUpReports(h.deps, { rounds: 1, periods: ['30d'] });
    expect(h.deps.answers!.counts.computed).toBe(computedBefore);
    expect(await countEvents(h, WARM_UP_PROJECT_ID)).toBe(0);
  });

  it('stops at the first error, and once aborted', async () => {
    const refused = new Error('connection refused');
    const refusing = { ...h.deps, clickhouse: withQuery(h.deps.clickhouse, async () => Promise.reject(refused)) };
    expect(await warmUpReports(refusing)).toEqual({ asked: 0, error: refused });

    const stop = new AbortController();
    stop.abort();
    expect(await warmUpReports(h.deps, { signal: stop.signal })).toEqual({ asked: 0 });
  });
});

