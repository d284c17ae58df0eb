import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withQuery, type ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { coalescedReads, combinable, inBackground, isBackground, promote, sameReadKey } from '../../src/adapters/coalesced-reads.js';
import { fixedClock } from '../../src/adapters/clock.js';
import { createApp } from '../../src/app.js';
import { createServices } from '../../src/services.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';
import { newProject, seededRandom } from '../helpers/report-fixtures.js';
import { PART_TABLES } from '../../src/reports/sql/window.js';

type Read = Parameters<ClickHouseClient['query']>[0];

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await closeHarness();
});

/** The engine's client, counting the statements that reach it. */
function counted(client: ClickHouseClient) {
  const sent: string[] = [];
  const counting = withQuery(client, (params) => {
    sent.push(params.query);
    return client.query(params);
  });
  return { sent, reads: coalescedReads(counting) };
}

const rowsOf = async (client: ClickHouseClient, read: Read) => (await client.query(read)).json();
const alone = async (reads: readonly Read[]) => {
  const answers: unknown[] = [];
  for (const read of reads) answers.push(await rowsOf(h.deps.clickhouse, read));
  return answers;
};

const ordered = (k: number, count: number, limit: number): Read => ({
  query: `SELECT number AS n, number * {k:UInt64} AS big, toString(number) AS s FROM numbers({count:UInt64}) ORDER BY cityHash64(number, {k:UInt64}) LIMIT {limit:UInt64}`,
  query_params: { k, count, limit },
  format: 'JSONEachRow',
});

const typed: Read = {
  query: `
SELECT {text:String} AS text, toUInt64(18446744073709551615) AS max64, CAST(NULL AS Nullable(Float32)) AS missing, [1, 2] AS list,
       map('k', {text:String}) AS m, toDateTime64({at:DateTime64(3, 'UTC')}, 3, 'UTC') AS at, 0.1 + 0.2 AS f -- a trailing comment`,
  query_params: { text: 'quote " back\\slash \n newline, Über, 😀', at: '2026-03-29 01:30:00.125' },
  format: 'JSONEachRow',
};

const empty: Read = { query: 'SELECT number FROM numbers(10) WHERE number > {above:UInt64}', query_params: { above: 100 }, format: 'JSONEachRow' };
/** Columns named like those of the combined statement's own branches. */
const namedLikeBranches: Read = { query: "SELECT {a:UInt8} AS read, 'x' AS rows FROM numbers(2)", query_params: { a: 5 }, format: 'JSONEachRow' };

describe('reads that wait together', () => {
  it('go to the engine as one statement, each answered exactly as alone (order, types, empty, same parameter names, column names)', async () => {
    const reads = [ordered(3, 1000, 50), typed, empty, ordered(7, 500, 500), ordered(3, 20, 5), namedLikeBranches];
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const together = await Promise.all(reads.map((read) => rowsOf(client, read)));
    expect(sent).toHaveLength(1);
    expect(together).toEqual(await alone(reads));
    expect((together[1] as { max64: string }[])[0]!.max64).toBe('18446744073709551615');
    expect(together[2]).toEqual([]);
    expect((together[3] as unknown[]).length).toBe(500);
  });

  it('that are identical are sent once, each caller getting its own rows', async () => {
    const reads = [ordered(3, 100, 5), empty, ordered(3, 100, 5), ordered(4, 100, 5), ordered(3, 100, 5)];
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const together = (await Promise.all(reads.map((read) => rowsOf(client, read)))) as { n: string }[][];
    expect(sent).toHaveLength(1);
    expect(sent[0]!.match(/ AS read, /g)).toHaveLength(3);
    expect(together).toEqual(await alone(reads));
    together[0]![0]!.n = 'changed by its caller';
    expect(together[2]![0]!.n).not.toBe('changed by its caller');
  });

  it('are answered when their parameters cannot be compared as JSON (a BigInt), and later reads still go out', async () => {
    const big = (n: bigint): Read => ({ query: 'SELECT {n:UInt64} + 1 AS next', query_params: { n }, format: 'JSONEachRow' });
    const { reads: client } = counted(h.deps.clickhouse);
    expect(await Promise.all([rowsOf(client, big(5n)), rowsOf(client, big(18446744073709551614n))])).toEqual([[{ next: '6' }], [{ next: '18446744073709551615' }]]);
    expect(await Promise.all([rowsOf(client, empty), rowsOf(client, ordered(2, 10, 2))])).toEqual(await alone([empty, ordered(2, 10, 2)]));
  });

  it('keep a large ordered answer in its order', async () => {
    const reads = [ordered(11, 200_000, 100_000), ordered(13, 10, 10)];
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const together = await Promise.all(reads.map((read) => rowsOf(client, read)));
    expect(sent).toHaveLength(1);
    expect(together).toEqual(await alone(reads));
  });

  it('arriving while a statement runs go together in the next one', async () => {
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const first = rowsOf(client, ordered(1, 3_000_000, 1));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    const later = [ordered(2, 100, 3), empty, typed].map((read) => rowsOf(client, read));
    await Promise.all([first, ...later]);
    expect(sent).toHaveLength(2);
    expect(await Promise.all(later)).toEqual(await alone([ordered(2, 100, 3), empty, typed]));
  });

  it("of a background client go only into statements no user's read waits for, until it is promoted", async () => {
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const background = inBackground(client);
    expect(isBackground(background)).toBe(true);
    const first = rowsOf(client, ordered(1, 3_000_000, 1));
    await new Promise((resolve) => setImmediate(resolve));
    const later = [rowsOf(background, ordered(2, 100, 3)), rowsOf(client, empty), rowsOf(background, typed)];
    await Promise.all([first, ...later]);
    // The user's read alone, then the background reads together.
    expect(sent).toHaveLength(3);
    expect(sent[1]).toBe(empty.query);
    expect(sent[2]!.match(/ AS read, /g)).toHaveLength(2);
    expect(await Promise.all(later)).toEqual(await alone([ordered(2, 100, 3), empty, typed]));
    // With no user's read waiting, a background read goes at once.
    expect(await rowsOf(background, empty)).toEqual([]);
    expect(sent).toHaveLength(4);

    const waiting = rowsOf(client, ordered(1, 3_000_000, 1));
    await new Promise((resolve) => setImmediate(resolve));
    const promoted = rowsOf(background, typed);
    const users = rowsOf(client, empty);
    promote(background);
    expect(isBackground(background)).toBe(false);
    await Promise.all([waiting, promoted, users]);
    // One statement after the long one: the promoted read went with the user's.
    expect(sent).toHaveLength(6);
    expect(sent[5]!.match(/ AS read, /g)).toHaveLength(2);
  });

  it('a client that does not coalesce reads has no background client but itself', () => {
    const plain = withQuery(h.deps.clickhouse, (params) => h.deps.clickhouse.query(params));
    expect(inBackground(plain)).toBe(plain);
    expect(isBackground(plain)).toBe(false);
  });

  it('are sent in statements of at most 32 reads', async () => {
    const reads = Array.from({ length: 40 }, (_, i) => ordered(i + 1, 50, 3));
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const together = await Promise.all(reads.map((read) => rowsOf(client, read)));
    expect(sent).toHaveLength(2);
    expect(together).toEqual(await alone(reads));
  });

  it('each get their own error or answer when one of them fails', async () => {
    const failing: Read = { query: 'SELECT n FROM no_such_table_here WHERE n = {n:UInt8}', query_params: { n: 1 }, format: 'JSONEachRow' };
    const good = [ordered(5, 100, 4), empty];
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const [a, bad, b] = await Promise.allSettled([rowsOf(client, good[0]!), rowsOf(client, failing), rowsOf(client, good[1]!)]);
    expect(bad.status).toBe('rejected');
    expect(String((bad as PromiseRejectedResult).reason)).toMatch(/no_such_table_here/);
    expect([a, b].map((r) => (r as PromiseFulfilledResult<unknown>).value)).toEqual(await alone(good));
    // The combined statement, then each read alone.
    expect(sent).toHaveLength(4);
  });
});

/** An answer's rows, without the timings a `JSON` answer carries. */
async function comparable(answer: Awaited<ReturnType<ClickHouseClient['query']>>) {
  const value = (await answer.json()) as unknown;
  if (value && typeof value === 'object' && 'statistics' in value) delete (value as { statistics?: unknown }).statistics;
  return value;
}

describe('reads that cannot be combined', () => {
  const cases: [string, Read][] = [
    ['its own settings', { ...empty, clickhouse_settings: { max_threads: 1 } }],
    ['another format', { ...empty, format: 'JSON' }],
    ['not a SELECT', { query: 'SHOW TABLES', format: 'JSONEachRow' }],
    ['a brace that is no parameter of it', { query: "SELECT concat({a:String}, '{b:c}') AS t", query_params: { a: 'x' }, format: 'JSONEachRow' }],
    ['a SETTINGS clause', { query: 'SELECT number FROM numbers({n:UInt8}) SETTINGS max_threads = 1', query_params: { n: 2 }, format: 'JSONEachRow' }],
  ];
  it.each(cases)('go as they are: %s', async (_, read) => {
    expect(combinable(read)).toBe(false);
    const { sent, reads: client } = counted(h.deps.clickhouse);
    const [mine] = await Promise.all([client.query(read), rowsOf(client, empty), rowsOf(client, typed)]);
    // Sent untouched beside the combined statement of the other two.
    expect(sent).toContain(read.query);
    expect(sent).toHaveLength(2);
    expect(await comparable(mine)).toEqual(await comparable(await h.deps.clickhouse.query(read)));
  });

  it('a bound SELECT answered as JSONEachRow is combinable', () => {
    expect(combinable(ordered(1, 1, 1))).toBe(true);
    expect(combinable(typed)).toBe(true);
  });
});

describe('a whole dashboard through the app', () => {
  let owner: TestUser;
  let domain: string;
  beforeAll(async () => {
    owner = await h.user('coalesce');
    const project = await newProject(h, owner);
    domain = project.domain;
    const rnd = seededRandom(16);
    const now = h.deps.clock.now();
    const events = Array.from({ length: 600 }, (_, i) =>
      makeEvent({
        ts: now - rnd.int(60_000, 20 * 86_400_000),
        kind: rnd.pick(['pageview', 'pageview', 'pageview', 'custom', 'leave'] as const),
        visitor: 1 + (i % 90),
        // Sessions of one visitor each, as ingestion derives them.
        session: (1 + (i % 90)) * 10 + (i % 150 < 75 ? 0 : 1),
        path: rnd.pick(['/', '/pricing', '/docs', '/blog/a']),
        referrerSource: rnd.pick(['(direct)', 'google.com', 't.co']),
        ...rnd.pick([{ countryCode: 'US', countryName: 'United States' }, { countryCode: 'DE', countryName: 'Germany' }]),
        eventName: 'signup',
        durationMs: rnd.int(1_000, 90_000),
      }),
    );
    await insertEvents(h.deps.rowStore, project.id, events);
  });

  /** The reads `reports` (30d, one after another, without the answer cache) send at `at`, as combined reads tell them apart: text and the values of the parameters it names. */
  const readsOf = async (reports: readonly string[], at: number) => {
    const asked: string[] = [];
    const recording = withQuery(h.deps.clickhouse, (params) => {
      asked.push(sameReadKey(params));
      return h.deps.clickhouse.query(params);
    });
    const deps = { ...h.deps, clickhouse: recording, answers: undefined, clock: fixedClock(at) };
    const app = createApp(deps, createServices(deps));
    for (const report of reports) {
      const res = await app.request(`/api/v1/projects/${domain}/${report}?period=30d`, { headers: { Authorization: `Bearer ${owner.readKey}` } });
      expect(res.status, report).toBe(200);
    }
    return asked.sort();
  };

  /**
   * `report` (30d, without the answer cache) asked once, its background work awaited (a part stored
   * after the first answer), and asked again: both answers, and the statements the second one sent.
   */
  const askedAgain = async (report: string) => {
    const { sent, reads } = counted(h.deps.clickhouse);
    const deps = { ...h.deps, clickhouse: reads, answers: undefined, clock: fixedClock(h.deps.clock.now()) };
    const app = createApp(deps, createServices(deps));
    const ask = () => app.request(`/api/v1/projects/${domain}/${report}?period=30d`, { headers: { Authorization: `Bearer ${owner.readKey}` } });
    const first = await ask();
    await h.deps.background!.settled();
    const before = sent.length;
    const again = await ask();
    expect(again.status, report).toBe(200);
    return { first: await first.json(), again: await again.json(), sent: sent.slice(before) };
  };

  it('sends the stats report’s reads, rollups and the stored visits of closed hours, as one statement', async () => {
    // The first ask sums the part of closed hours after answering.
    const { first, again, sent } = await askedAgain('stats');
    expect(again).toEqual(first);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('visit_parts');
    expect(sent[0]).toContain('stats_1d');
  });

  it('sends a list’s read of the part of its closed days as one statement, no rows-after-now check beside it once the data version keeps a latest-row stamp', async () => {
    for (const [report, family] of [['pages', 'pages'], ['devices', 'tech'], ['events', 'custom_events']] as const) {
      // The first ask stores the part after answering.
      const { first, again, sent } = await askedAgain(report);
      expect(again).toEqual(first);
      expect(sent, report).toHaveLength(1);
      expect(sent[0]).toContain(PART_TABLES[family]);
      // The first ask read the latest row and stamped it (src/reports/latest-row.ts).
      expect(sent[0]).not.toContain('AS latest, count() AS n');
    }
  });

  it('has stats and referrers read the same visits of closed hours, so a dashboard sends that read once', async () => {
    const at = h.deps.clock.now();
    const visitReads = async (report: string) => {
      const asked = await readsOf([report], at);
      await h.deps.background!.settled();
      return asked.filter((read) => read.includes('visit_parts'));
    };
    // The first ask sums the part; then both read it.
    await visitReads('referrers');
    const stats = await visitReads('stats');
    expect(stats.length).toBeGreaterThan(0);
    expect(await visitReads('referrers')).toEqual(stats);
  });

  it('answers its 12 requests sent at once as it answers them one by one', async () => {
    const { sent, reads } = counted(h.deps.clickhouse);
    // Without the answer cache, so that every answer is computed by the engine each time.
    const deps = { ...h.deps, clickhouse: reads, answers: undefined, clock: fixedClock(h.deps.clock.now()) };
    const app = createApp(deps, createServices(deps));
    const paths = ['stats', 'timeseries', 'pages', 'referrers', 'countries', 'cities', 'devices', 'browsers', 'os', 'events', 'visitors', 'performance'].map(
      (report) => `/api/v1/projects/${domain}/${report}?period=30d`,
    );
    const get = async (path: string) => {
      const res = await app.request(path, { headers: { Authorization: `Bearer ${owner.readKey}` } });
      expect(res.status).toBe(200);
      return res.json();
    };
    const oneByOne: unknown[] = [];
    for (const path of paths) oneByOne.push(await get(path));
    const byOne = sent.length;
    const atOnce = await Promise.all(paths.map(get));
    expect(atOnce).toEqual(oneByOne);
    expect(sent.length - byOne).toBeLessThan(byOne);
  });

  it('reads the same statements a few seconds later, so dashboards opened together send each once', async () => {
    // Two moments of one UTC hour a few seconds apart, after every stored event (so no read is cut at its own now).
    const HOUR = 3_600_000;
    let at = h.deps.clock.now() + 1_000;
    if (Math.floor(at / HOUR) !== Math.floor((at + 4_321) / HOUR)) at = Math.ceil(at / HOUR) * HOUR + 1_000;
    const dashboard = ['stats', 'timeseries', 'pages', 'referrers', 'countries', 'cities', 'devices', 'browsers', 'os', 'events', 'visitors', 'performance'];
    // The first dashboard of an hour stores its parts and measures its floor in the background, after which the reads
    // differ (the floor is bound): a run just after the hour began met that between the two. Measured as it runs after that.
    await readsOf(dashboard, at);
    await h.deps.background!.settled();
    const first = await readsOf(dashboard, at);
    const later = await readsOf(dashboard, at + 4_321);
    expect(first.length).toBeGreaterThan(12);
    expect(later).toEqual(first);
  });
});
