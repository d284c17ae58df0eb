import fc from 'fast-check';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { getProject } from '../../src/projects/store.js';
import { ALL_PERIODS, resolvePeriod, type PeriodKey } from '../../src/reports/periods.js';
import type { PlannedReport } from '../../src/reports/planned.js';
import { SOURCES } from '../../src/reports/planner.js';
import { findReport } from '../../src/reports/registry.js';
import { eventsArb, insertEvents, timesAround, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';
import * as ref from '../helpers/reference.js';

const clock = fixedClock(Date.parse('2026-03-08T12:00:00Z'));
let h: Harness;
let user: TestUser;
beforeAll(async () => {
  h = await createHarness({ clock });
  user = await h.user('props');
});
afterAll(closeHarness);

const ZONES = ['UTC', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/St_Johns', 'Pacific/Chatham', 'America/New_York', 'Europe/London', 'America/Santiago'];
/**
 * DST transition days (US spring/fall, EU spring/fall, Chatham and Santiago end/start — Santiago
 * skips midnight itself) and one plain day.
 */
const DAYS = ['2026-03-08', '2026-11-01', '2026-03-29', '2026-10-25', '2026-04-05', '2026-09-27', '2026-09-06', '2026-06-15'];

/** A project zone, a "now" on or near a DST transition day, events around `period`, a limit. */
/** Each zone on its own transition days, so every run with these lands near a real DST change. */
const DST_PAIRS = [
  ['America/New_York', '2026-03-08'], ['America/New_York', '2026-11-01'],
  ['America/St_Johns', '2026-03-08'], ['America/St_Johns', '2026-11-01'],
  ['Europe/London', '2026-03-29'], ['Europe/London', '2026-10-25'],
  ['Pacific/Chatham', '2026-04-05'], ['Pacific/Chatham', '2026-09-27'],
  ['America/Santiago', '2026-04-05'], ['America/Santiago', '2026-09-06'],
].map(([timeZone, day]) => ({ timeZone: timeZone!, day: day! }));

const zoneAndDay = fc.oneof(fc.constantFrom(...DST_PAIRS), fc.record({ timeZone: fc.constantFrom(...ZONES), day: fc.constantFrom(...DAYS) }));

const scenarioFor = (period: PeriodKey) =>
  fc
    .record({
      zd: zoneAndDay,
      // From half a day before to a day and a half after UTC midnight, so "now" lands on the
      // transition day in every zone at some point.
      // Mostly mid-hour (partial first and last 24h buckets, a partial quarter hour), sometimes on
      // a quarter hour or an hour.
      offsetMs: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: -12 * 3_600_000, max: 36 * 3_600_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: -48, max: 144 }).map((q) => q * 900_000) },
      ),
      limit: fc.integer({ min: 1, max: 12 }),
    })
    .chain(({ zd, ...s }) => {
      const now = Date.parse(`${zd.day}T00:00:00Z`) + s.offsetMs;
      const p = resolvePeriod(period, zd.timeZone, now);
      return eventsArb(timesAround(p.from, p.now, [p.from, ...p.buckets])).map((events) => ({ ...s, timeZone: zd.timeZone, period, now, events }));
    });

type Scenario = { timeZone: string; now: number; period: PeriodKey; limit: number; events: GenEvent[] };
type Expectation = (events: GenEvent[], p: ref.RefPeriod, limit: number) => unknown;

/** Durations and rates are floats: compare them to 9 decimals, everything else exactly. */
const normalize = (body: unknown) =>
  JSON.parse(JSON.stringify(body), (k, v) => (['avgDurationSeconds', 'bounceRate', 'viewsPerVisit'].includes(k) && typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v));

async function setUp(s: Scenario) {
  clock.set(s.now);
  const domain = h.domain('props');
  const res = await h.call('POST', '/api/v1/projects', { token: user.writeKey, body: { name: 'Props', domain, timeZone: s.timeZone } });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const project = (await getProject(h.deps.redis, id))!;
  await insertEvents(h.deps.rowStore, id, s.events);
  return { domain, project };
}

/** Every report in `cases` answers the reference, over HTTP (planner's choice) and from each source. */
function property(period: PeriodKey, cases: Record<string, Expectation>) {
  return fc.asyncProperty(scenarioFor(period), async (s) => {
    const { domain, project } = await setUp(s);
    const period = resolvePeriod(s.period, s.timeZone, s.now);
    for (const [name, expectation] of Object.entries(cases)) {
      const def = findReport(name) as PlannedReport;
      const limited = 'limit' in (def.query as unknown as { entries: object }).entries;
      const want = normalize(expectation(s.events, period, limited ? s.limit : Number.POSITIVE_INFINITY));
      const qs = `period=${s.period}${limited ? `&limit=${s.limit}` : ''}`;
      const res = await h.call('GET', `/api/v1/projects/${domain}/${name}?${qs}`, { token: user.readKey });
      expect(res.status, name).toBe(200);
      const body = await res.json();
      // The answer matches the schema published in /openapi.json, and the reference.
      expect(v.safeParse(def.response, body).issues, `${name} schema`).toBeUndefined();
      expect(normalize(body), `${name} over HTTP`).toEqual(want);
      for (const source of SOURCES) {
        const input = limited ? { period: s.period, limit: s.limit } : { period: s.period };
        const got = await def.compute({ deps: h.deps, project, role: 'owner' }, input, source);
        expect(normalize(got), `${name} from ${source}`).toEqual(want);
      }
    }
  });
}

const EXPECTATIONS: Record<string, Expectation> = {
  stats: ref.refStats,
  timeseries: ref.refTimeseries,
  pages: ref.refPages,
  referrers: ref.refReferrers,
  countries: ref.refCountries,
  cities: ref.refCities,
  devices: ref.refDevices,
  browsers: ref.refBrowsers,
  os: ref.refOs,
  events: ref.refEvents,
};

describe('core reports equal an independent computation from the raw events', () => {
  it.each(ALL_PERIODS)('period %s: every core report, over HTTP and from rollups and raw events', async (period) => {
    await fc.assert(property(period, EXPECTATIONS), { numRuns: 6, endOnFailure: true });
  }, 120_000);
});
