import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS, type Metric } from '../../src/analysis/question.js';
import { runQuestion } from '../../src/analysis/run.js';
import { resolvePeriod, type PeriodKey } from '../../src/reports/periods.js';
import { insertEvents, makeEvent, timesAround, visitsArb, type GenEvent } from '../helpers/events-gen.js';
import { filterArb, GROUPABLE } from '../helpers/question-arbs.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';
import { refAnswer, type RefQuestion, type RefRow } from '../helpers/reference-analysis.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(closeHarness);

const questionArb = (events: readonly GenEvent[]): fc.Arbitrary<RefQuestion> =>
  fc.record(
    {
      metrics: fc.shuffledSubarray([...METRICS], { minLength: 1, maxLength: 3 }),
      dimensions: fc.uniqueArray(fc.constantFrom(...GROUPABLE), { minLength: 0, maxLength: 2 }),
      filters: fc.array(filterArb(events), { minLength: 0, maxLength: 3 }),
      limit: fc.integer({ min: 1, max: 6 }),
      offset: fc.integer({ min: 0, max: 3 }),
    },
    { requiredKeys: ['metrics', 'dimensions', 'filters'] },
  );

/** Zones and days near their DST change (New York) or plain ones, the clock within a day and a half of that midnight. */
const ZONE_DAYS = [
  ['UTC', '2026-06-15'], ['UTC', '2026-03-01'],
  ['Asia/Kolkata', '2026-03-08'], ['Asia/Kolkata', '2026-11-01'],
  ['America/New_York', '2026-03-08'], ['America/New_York', '2026-11-01'],
  ['Asia/Kathmandu', '2026-03-08'], ['Asia/Kathmandu', '2026-11-01'],
].map(([timeZone, day]) => ({ timeZone: timeZone!, day: day! }));

interface Case {
  timeZone: string;
  now: number;
  events: GenEvent[];
  questions: RefQuestion[];
}

const caseArb = (key: PeriodKey): fc.Arbitrary<Case> =>
  fc
    .record({
      zoneDay: fc.constantFrom(...ZONE_DAYS),
      // Mostly mid-hour, sometimes exactly on an hour (an event at now then opens no new hour).
      offsetMs: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: -12 * 3_600_000, max: 36 * 3_600_000 }) },
        { weight: 1, arbitrary: fc.integer({ min: -12, max: 36 }).map((hours) => hours * 3_600_000) },
      ),
    })
    .chain(({ zoneDay: { timeZone, day }, offsetMs }) => {
      const now = Date.parse(`${day}T00:00:00Z`) + offsetMs;
      const p = resolvePeriod(key, timeZone, now);
      // Sessions start around the period and its buckets' edges; their later steps cross them.
      // Now itself and the start, ±1 ms, often: the inclusive end and start of the period.
      const starts = fc.oneof(
        { weight: 5, arbitrary: timesAround(p.from, p.now, [p.from, ...p.buckets]) },
        { weight: 1, arbitrary: fc.constantFrom(p.now, p.now - 1, p.now + 1, p.from, p.from - 1) },
      );
      return visitsArb(starts).chain((events) => fc.array(questionArb(events), { minLength: 3, maxLength: 3 }).map((questions) => ({ timeZone, now, events, questions })));
    });

const RATES: ReadonlySet<string> = new Set<Metric>(['bounceRate', 'viewsPerVisit', 'avgDurationSeconds']);

/** `got` with each rate replaced by the reference's when they agree to 1e-9 relative, so toEqual shows only real differences. */
function withinTolerance(got: RefRow[], want: RefRow[]): RefRow[] {
  return got.map((row, i) =>
    Object.fromEntries(
      Object.entries(row).map(([k, x]) => {
        const w = want[i]?.[k];
        const close = RATES.has(k) && typeof x === 'number' && typeof w === 'number' && Math.abs(x - w) <= 1e-9 * Math.max(Math.abs(x), Math.abs(w));
        return [k, close ? w : x];
      }),
    ),
  );
}

/** Answers with at least one metric neither zero nor null, over all cases: the generator must give the comparison something to compare. */
let nonTrivial = 0;
let asked = 0;

/** The clock hour before `now` (on the hour in every zone used with it here). */
const hourBefore = (now: number) => now - 3_600_000;

async function check(key: PeriodKey, c: Case) {
  const projectId = unique('analysis-ref');
  await insertEvents(h.deps.rowStore, projectId, c.events);
  const period = resolvePeriod(key, c.timeZone, c.now);
  for (const q of c.questions) {
    // The pipeline's one pass (README "Visits of closed hours": parts answer as it does, test/integration/closed-hours.test.ts).
    const got = await runQuestion({ ...h.deps, dataVersions: undefined, closedHours: undefined }, projectId, period, q);
    const want = refAnswer(c.events, { from: period.from, now: period.now, bucketTimeZone: period.bucketTimeZone }, q);
    expect(withinTolerance(got, want), JSON.stringify({ key, timeZone: c.timeZone, now: new Date(c.now).toISOString(), q })).toEqual(want);
    asked++;
    if (want.some((r) => q.metrics.some((m) => r[m] !== null && r[m] !== 0))) nonTrivial++;
  }
}

/** Datasets per period (three questions each). */
const RUNS = 40;

describe('runQuestion equals an independent computation over the raw events', () => {
  it.each(['7d', '30d', '24h', 'today'] as const)('period %s: random visits, random questions, zones near DST changes', async (key) => {
    await fc.assert(fc.asyncProperty(caseArb(key), (c) => check(key, c)), { numRuns: RUNS, interruptAfterTimeLimit: 40_000, markInterruptAsFailure: true });
  }, 120_000);

  it('events at now on the hour join the last hour; events at the start count, 1 ms before it do not', async () => {
    const questions: RefQuestion[] = [
      { metrics: ['pageviews', 'sessions'], dimensions: ['time:hour'], filters: [] },
      { metrics: ['pageviews'], dimensions: ['time:day', 'page'], filters: [] },
      { metrics: ['pageviews', 'visitors'], dimensions: ['time:month'], filters: [] },
    ];
    for (const [timeZone, nowIso] of [['Asia/Kathmandu', '2026-03-08T09:15:00Z'], ['America/New_York', '2026-03-08T08:00:00Z'], ['America/New_York', '2026-11-01T06:00:00Z']] as const) {
      const now = Date.parse(nowIso);
      for (const key of ['24h', 'today'] as const) {
        const p = resolvePeriod(key, timeZone, now);
        const at = (ts: number, session: number, path: string) => makeEvent({ ts, visitor: session, session, path });
        const events = [at(now, 1, '/now'), at(now - 1, 2, '/before-now'), at(now + 1, 3, '/after-now'), at(p.from, 4, '/start'), at(p.from - 1, 5, '/before-start')];
        const want = refAnswer(events, { from: p.from, now: p.now, bucketTimeZone: p.bucketTimeZone }, questions[0]!);
        // The hand-made case the reference itself must get right: now and 1 ms before it share the last hour.
        expect(want.at(-1), `${timeZone} ${key}`).toEqual({ 'time:hour': new Date(hourBefore(now)).toISOString(), pageviews: 2, sessions: 2 });
        await check(key, { timeZone, now, events, questions });
      }
    }
  });

  it('the generated questions mostly had something to count', () => {
    expect(asked).toBeGreaterThanOrEqual(4 * RUNS * 3);
    expect(nonTrivial / asked).toBeGreaterThan(0.4);
  });
});
