import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { Binder } from '../../src/analysis/binder.js';
import { MEASURED_FLOOR_PARAM, VISIT_SUMS, type PlanInput } from '../../src/analysis/plan.js';
import { openFloorKey, windowFloorKey } from '../../src/analysis/open-floors.js';
import { withQuery } from '../../src/adapters/clickhouse.js';
import { mayReachPage, PART_EXISTS_SQL, PART_ROWS, rankedByVisitors, readPartsSql } from '../../src/analysis/plan-parts.js';
import { StoredParts, storedPartKey } from '../../src/reports/stored-parts.js';
import { rawParams } from '../../src/reports/query.js';
import { METRICS, type Metric } from '../../src/analysis/question.js';
import { runQuestion, type AnswerRow, type Question } from '../../src/analysis/run.js';
import { closedHoursCut, openParams, pinClosedHours } from '../../src/analysis/closed-hours.js';
import { backgroundTasks, type Background } from '../../src/adapters/background.js';
import { toClickHouseDateTime64 } from '../../src/adapters/clickhouse-time.js';
import { resolvePeriod, type ResolvedPeriod } from '../../src/reports/periods.js';
import { comparePeriod, resolveCustomRange } from '../../src/reports/range.js';
import type { CompareMode } from '../../src/analysis/question.js';
import { DIRECT_FOLD } from '../../src/reports/visits-by-source.js';
import { insertEvents, makeEvent, visitsArb, type GenEvent } from '../helpers/events-gen.js';
import { filterArb, FILTERABLE, GROUPABLE } from '../helpers/question-arbs.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Half past noon UTC: the cut (the start of the UTC hour) is 30 minutes back, the period's start days back. */
const NOW = Date.parse('2026-03-08T12:30:00Z');
const CUT = NOW - 30 * MINUTE;
/** A moment after the cut. */
const SINCE_CUT = NOW - 10 * MINUTE;
/** Sessions with an event since then are open: read whole at every ask, never in a part. */
const OPEN_FROM = CUT - 30 * MINUTE;
const clock = fixedClock(NOW);

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ clock });
});
afterAll(closeHarness);

/** The deps of the pipeline's one pass: no closed-hours version, so no part answers. */
const wholeDeps = () => ({ ...h.deps, dataVersions: undefined, closedHours: undefined });

/** The referrers' question: every source with the visit sums stats adds up. */
const BY_SOURCE: Question = { metrics: ['pageviews', 'visitors', ...VISIT_SUMS], dimensions: ['source'], filters: [], fold: DIRECT_FOLD, limit: 4_294_967_295 };

const wholePass = (projectId: string, period: ResolvedPeriod, q: Question = BY_SOURCE) => runQuestion(wholeDeps(), projectId, period, q);
/**
 * A question asked where parts may answer it: its first ask sums a missing part in the background
 * (after the whole pass answered), so the part is awaited and the question asked again.
 */
async function sinceCut(projectId: string, period: ResolvedPeriod, q: Question = BY_SOURCE) {
  await runQuestion(h.deps, projectId, period, q);
  await h.deps.background!.settled();
  return runQuestion(h.deps, projectId, period, q);
}

/** Rates are floats: compared to 9 decimals, everything else exactly. */
const shape = (rows: readonly AnswerRow[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v])));

/**
 * Questions over the generated visits: any metrics, up to three dimensions of every kind (visit
 * attributes, event values, time buckets), up to two filters on any dimension, sometimes the
 * referrers' fold, a page of rows.
 */
const questionArb = (events: readonly GenEvent[]): fc.Arbitrary<Question> =>
  fc
    .record({
      dimensions: fc.uniqueArray(fc.constantFrom(...GROUPABLE), { minLength: 0, maxLength: 3 }),
      filters: fc.array(filterArb(events, FILTERABLE), { minLength: 0, maxLength: 2 }),
      metrics: fc.subarray([...METRICS] as Metric[], { minLength: 1 }),
      fold: fc.boolean(),
      limit: fc.integer({ min: 1, max: 12 }),
      offset: fc.integer({ min: 0, max: 2 }),
    })
    .map(({ dimensions, filters, metrics, fold, limit, offset }) => ({
      metrics,
      dimensions,
      filters,
      ...(dimensions[0] === 'source' && fold ? { fold: DIRECT_FOLD } : {}),
      limit,
      offset,
    }));

/** Random visits with session starts from `starts`, and three questions over them. */
const visitsAndQuestions = (starts: fc.Arbitrary<number>) =>
  visitsArb(starts).chain((events) => fc.tuple(fc.constant(events), fc.array(questionArb(events), { minLength: 3, maxLength: 3 })));

/** Asks the referrers' question and `questions` from parts and by the whole pass: the answers must be the same. */
async function partsAgree(projectId: string, period: ResolvedPeriod, questions: readonly Question[]) {
  for (const q of [BY_SOURCE, ...questions]) expect([q, shape(await sinceCut(projectId, period, q))]).toEqual([q, shape(await wholePass(projectId, period, q))]);
}

/** Rows stored for the project's parts: [part key, rows] per part filled. */
async function storedParts(projectId: string): Promise<[string, number][]> {
  const rs = await h.deps.clickhouse.query({
    query: 'SELECT part_key, toUInt32(count()) AS n FROM visit_parts WHERE project_id = {projectId:String} GROUP BY part_key ORDER BY part_key',
    query_params: { projectId },
    format: 'JSONEachRow',
  });
  return (await rs.json<{ part_key: string; n: number }>()).map((r) => [r.part_key, r.n]);
}

/** After a write that moved the closed-hours version: the parts `filled` before it are kept, and new ones summed beside them. */
async function expectSummedAgain(projectId: string, filled: [string, number][]) {
  const refilled = await storedParts(projectId);
  expect(refilled.length).toBeGreaterThan(filled.length);
  expect(refilled).toEqual(expect.arrayContaining(filled));
}

/**
 * The events with live sessions' floors: half of the sessions (which half, by `pick`) carry the tightest floor there
 * is, their first event's time; the rest none, as imported.
 */
function withLiveFloors(events: readonly GenEvent[], pick: number): GenEvent[] {
  const live = pick % 2;
  const firstOf = new Map<number, number>();
  for (const e of events) firstOf.set(e.session, Math.min(e.ts, firstOf.get(e.session) ?? Infinity));
  return events.map((e) => (e.session % 2 === live ? { ...e, sessionFloor: firstOf.get(e.session)! } : e));
}

/** Session starts around what matters: the cut, the period's start, and anywhere in the week. */
const starts = (period: ResolvedPeriod) =>
  fc.oneof(
    fc.integer({ min: CUT - 4 * HOUR, max: NOW }),
    fc.integer({ min: period.from - 4 * HOUR, max: period.from + 2 * HOUR }),
    fc.integer({ min: period.from - DAY, max: NOW - HOUR }),
  );

/** Two visits before the cut (from google.com with two pageviews, and a direct bounce) and one after it (from t.co). */
const insertThreeVisits = (projectId: string) =>
  insertEvents(h.deps.rowStore, projectId, [
    makeEvent({ ts: NOW - 3 * DAY, visitor: 1, referrerSource: 'google.com' }),
    makeEvent({ ts: NOW - 3 * DAY + 5000, visitor: 1, path: '/pricing' }),
    makeEvent({ ts: NOW - 2 * DAY, visitor: 2 }),
    makeEvent({ ts: SINCE_CUT, visitor: 3, referrerSource: 't.co' }),
  ]);

describe('visits of closed hours kept apart', () => {
  it.each(['UTC', 'Asia/Kolkata', 'America/New_York'])('answer what the pass over the whole period answers (%s): filled, kept, as sessions go on past the cut, and summed again after an import into a closed hour', async (timeZone) => {
    const period = resolvePeriod('7d', timeZone, NOW);
    await fc.assert(
      fc.asyncProperty(visitsAndQuestions(starts(period)), fc.integer({ min: 0, max: 1000 }), async ([generated, questions], pick) => {
        const projectId = unique('cdv');
        // Events after now are not part of this question (query.ts cuts at now when they exist): keep them out.
        const events = withLiveFloors(generated.filter((e) => e.ts <= NOW), pick);
        await insertEvents(h.deps.rowStore, projectId, events);
        const agree = () => partsAgree(projectId, period, questions);
        await agree();
        const filled = await storedParts(projectId);
        expect(filled.length).toBeGreaterThanOrEqual(1);

        // A later event of a session begun before the cut (its bounce may end, its pageviews grow, a leave adds
        // time; as ingestion joins it: within the idle time of an event before) and a new session: the kept parts
        // are read as they are, and the answers still match.
        const joinAt = CUT + 500;
        const before = events.filter((e) => e.ts < CUT && e.ts > joinAt - 30 * MINUTE && e.ts >= period.from);
        const goingOn = before[pick % Math.max(1, before.length)];
        const kind = (['pageview', 'custom', 'leave'] as const)[pick % 3]!;
        const later: GenEvent[] = [makeEvent({ ts: NOW - 1000, visitor: 77, session: 770, referrerSource: 't.co', path: '/pricing', ...(pick % 2 ? {} : { sessionFloor: NOW - 1000 }) })];
        if (goingOn) later.push({ ...goingOn, ts: joinAt, kind, eventName: kind === 'custom' ? 'signup' : '', durationMs: kind === 'leave' ? 4000 : 0, path: '/later', referrerSource: 'newsletter' });
        await insertEvents(h.deps.rowStore, projectId, later);
        await agree();
        // Kept, unless one of them has no floor (as an import writes them): such a write moves the closed-hours version.
        if (later.every((e) => e.sessionFloor !== undefined)) expect(await storedParts(projectId)).toEqual(filled);
        else expect(await storedParts(projectId)).toEqual(expect.arrayContaining(filled));

        // An import into a closed hour moves the closed-hours version: the parts are summed again under new keys.
        const imported: GenEvent[] = [makeEvent({ ts: CUT - 3 * HOUR, visitor: 88, session: 880, referrerSource: 'google.com' })];
        if (goingOn) imported.push({ ...goingOn, ts: CUT - 1, kind: 'custom', eventName: 'download' });
        await insertEvents(h.deps.rowStore, projectId, imported);
        await agree();
        await expectSummedAgain(projectId, filled);
      }),
      // No shrinking: a counterexample is printed at once rather than after minutes of re-running the property.
      { numRuns: 6, endOnFailure: true },
    );
  }, 300_000);

  it('a visit whose first pageview comes after the cut moves to that entry page', async () => {
    const period = resolvePeriod('7d', 'UTC', NOW);
    const projectId = unique('cdv-entry');
    await insertEvents(h.deps.rowStore, projectId, [
      makeEvent({ ts: CUT - 20 * MINUTE, kind: 'custom', eventName: 'signup', path: '/x', referrerSource: 'google.com' }),
      makeEvent({ ts: CUT - 20 * MINUTE + 10, kind: 'leave', durationMs: 5000, path: '/x' }),
      makeEvent({ ts: NOW - 3 * DAY, visitor: 2, path: '/a' }),
    ]);
    const q: Question = { metrics: ['sessions', 'visitors', 'pageviews', 'events', 'avgDurationSeconds'], dimensions: ['entryPage'], filters: [] };
    expect(shape(await sinceCut(projectId, period, q))).toEqual(shape(await wholePass(projectId, period, q)));
    await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: SINCE_CUT, path: '/later' })]);
    const rows = await sinceCut(projectId, period, q);
    expect(shape(rows)).toEqual(shape(await wholePass(projectId, period, q)));
    expect(rows).toEqual([
      { entryPage: '/a', sessions: 1, visitors: 1, pageviews: 1, events: 0, avgDurationSeconds: null },
      { entryPage: '/later', sessions: 1, visitors: 1, pageviews: 1, events: 1, avgDurationSeconds: 5 },
    ]);
  });

  it('answer a range that ended before the cut from a part of all its visits, read without events, summed again after an import into it', async () => {
    // Ends three days back in Kolkata (+5:30: inside a UTC day); visits straddle its start and end.
    const range = resolveCustomRange('2026-02-25', '2026-03-04', 'Asia/Kolkata', NOW);
    expect(closedHoursCut(h.deps, range)).toBeNull();
    await fc.assert(
      fc.asyncProperty(visitsAndQuestions(fc.integer({ min: range.from - DAY, max: range.to + DAY })), async ([events, questions]) => {
        const projectId = unique('cdv-ended');
        await insertEvents(h.deps.rowStore, projectId, events);
        const agree = () => partsAgree(projectId, range, questions);
        await agree();
        const filled = await storedParts(projectId);
        expect(filled.length).toBeGreaterThanOrEqual(1);
        // Live events after the range, since the cut, change nothing of it.
        await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: SINCE_CUT, visitor: 99, session: 990, referrerSource: 't.co', sessionFloor: SINCE_CUT })]);
        await agree();
        expect(await storedParts(projectId)).toEqual(filled);
        await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: range.to - HOUR, visitor: 88, session: 880, referrerSource: 'google.com' })]);
        await agree();
        expect((await storedParts(projectId)).length).toBeGreaterThan(filled.length);
      }),
      { numRuns: 4, endOnFailure: true },
    );
    // Read from its part, the range reads no events at all.
    const projectId = unique('cdv-ended-read');
    await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: range.to - DAY, referrerSource: 'google.com' })]);
    const binder = new Binder({ ...rawParams(h.deps, projectId, range), partKey: 'summed' });
    const q: PlanInput = { projectId, period: range, metrics: ['visitors'], dimensions: ['exitPage'], filters: [], orderBy: [['visitors', 'desc']], limit: 10, offset: 0 };
    const rs = await h.deps.clickhouse.query({ query: `EXPLAIN ESTIMATE ${readPartsSql(q, binder, 'ended')}`, query_params: binder.params, format: 'JSONEachRow' });
    expect((await rs.json<{ table: string }>()).map((r) => r.table)).toEqual(['visit_parts']);
  }, 300_000);

  describe('a comparison of a period ending now, whose end moves with the clock', () => {
    /** The comparison of the 30 days up to `now` (previous 30 days, or last year's): it ends at now's clock time on the shifted day. */
    const comparisonOf = (timeZone: string, mode: CompareMode) => {
      const previousAt = (now: number) => comparePeriod(resolvePeriod('30d', timeZone, now), mode);
      const previous = previousAt(NOW);
      /** The window of open sessions around the hour the comparison ends in: its cut less the idle time, to the hour's end. */
      const windowCut = Math.floor(previous.now / HOUR) * HOUR;
      const windowFrom = windowCut - 30 * MINUTE;
      const windowTo = windowCut + HOUR;
      /** Session starts around what matters: the window, the comparison's start, and anywhere in its days. */
      const starts = fc.oneof(
        fc.integer({ min: windowFrom - 4 * HOUR, max: windowTo + HOUR }),
        fc.integer({ min: previous.from - 4 * HOUR, max: previous.from + 2 * HOUR }),
        fc.integer({ min: previous.from - DAY, max: windowTo }),
      );
      return { previousAt, previous, windowCut, windowFrom, windowTo, starts };
    };
    const { previousAt, previous, windowCut, windowFrom, windowTo } = comparisonOf('UTC', 'previous_period');
    const at = (now: number) => ({ ...h.deps, clock: fixedClock(now) });
    /** Asked where parts may answer it (twice, the part summed after the first), and by the whole pass: the same answer. */
    const agreeAt = async (now: number, projectId: string, q: Question = BY_SOURCE, periodAt = previousAt) => {
      const period = periodAt(now);
      await runQuestion(at(now), projectId, period, q);
      await h.deps.background!.settled();
      const fromParts = shape(await runQuestion(at(now), projectId, period, q));
      expect([q, fromParts]).toEqual([q, shape(await runQuestion({ ...at(now), dataVersions: undefined, closedHours: undefined }, projectId, period, q))]);
      return fromParts;
    };

    it.each([
      ['UTC', 'previous_period'],
      ['Asia/Kolkata', 'year_over_year'],
    ] as const)('is answered from a part of the hour its end falls in, as the whole pass answers it, while the end moves within the hour; summed again after an import into it (%s, %s)', async (timeZone, mode) => {
      const { previousAt, previous, windowCut, windowFrom, starts } = comparisonOf(timeZone, mode);
      const agree = (now: number, projectId: string, q: Question) => agreeAt(now, projectId, q, previousAt);
      expect(previous.endFollowsClock).toBe(true);
      await fc.assert(
        fc.asyncProperty(visitsAndQuestions(starts), fc.integer({ min: 0, max: 1000 }), async ([generated, questions], pick) => {
          const projectId = unique('cdv-window');
          await insertEvents(h.deps.rowStore, projectId, withLiveFloors(generated, pick));
          for (const q of [BY_SOURCE, ...questions]) await agree(NOW, projectId, q);
          const filled = await storedParts(projectId);
          expect(filled.length).toBeGreaterThanOrEqual(1);
          expect(filled.every(([key]) => key.includes(':w'))).toBe(true);
          // Later in the same hour the comparison ends later, in the same window: the same parts answer it.
          const later = NOW + 20 * MINUTE;
          expect(Math.floor(previousAt(later).now / HOUR) * HOUR).toBe(windowCut);
          for (const q of [BY_SOURCE, ...questions]) await agree(later, projectId, q);
          expect(await storedParts(projectId)).toEqual(filled);
          // An import into the window (a session going on past the comparison's end, and one ending in it) moves the
          // closed-hours version: the parts are summed again under new keys.
          await insertEvents(h.deps.rowStore, projectId, [
            makeEvent({ ts: previous.now - 10 * MINUTE, visitor: 88, session: 880, referrerSource: 'google.com' }),
            makeEvent({ ts: previous.now + 5 * MINUTE, visitor: 88, session: 880, path: '/after-the-end' }),
            makeEvent({ ts: windowFrom + MINUTE, visitor: 89, session: 890, referrerSource: 'news.ycombinator.com', sessionFloor: windowFrom - 2 * HOUR }),
          ]);
          for (const q of [BY_SOURCE, ...questions]) await agree(NOW, projectId, q);
          await expectSummedAgain(projectId, filled);
        }),
        { numRuns: 6, endOnFailure: true },
      );
    }, 300_000);

    it('reads its open sessions from the floor measured after a first ask, within the window: not the comparison’s other days', async () => {
      const projectId = unique('cdv-window-floor');
      // Three granules of visits over the comparison's days, then a session that begins before the window's cut
      // and goes on past the comparison's end (imported: no floor), and a live one begun in the window.
      const days = Array.from({ length: 3 * 8192 }, (_, i) => makeEvent({ ts: previous.from + HOUR + i * 90_000, visitor: i + 1, referrerSource: 'google.com' }));
      const straddling = [
        makeEvent({ ts: windowCut - 50 * MINUTE, visitor: 500_000, session: 900_001, referrerSource: 't.co' }),
        makeEvent({ ts: windowCut - 25 * MINUTE, visitor: 500_000, session: 900_001, path: '/pricing' }),
        makeEvent({ ts: previous.now + 10 * MINUTE, visitor: 500_000, session: 900_001, path: '/after-the-end' }),
        makeEvent({ ts: windowCut + MINUTE, visitor: 500_001, session: 900_002, referrerSource: 'bing.com', sessionFloor: windowCut - 29 * MINUTE }),
      ];
      // And three granules of later visits of the same month, days after the window: no read of its open sessions takes them.
      const later = Array.from({ length: 3 * 8192 }, (_, i) => makeEvent({ ts: windowTo + 2 * DAY + i * 20_000, visitor: 600_000 + i, referrerSource: 'duckduckgo.com' }));
      expect(new Date(later.at(-1)!.ts).getUTCMonth()).toBe(new Date(windowTo).getUTCMonth());
      await insertEvents(h.deps.rowStore, projectId, [...days, ...straddling, ...later]);
      const fromParts = await agreeAt(NOW, projectId);
      expect(fromParts.map((r) => r.source)).toEqual(expect.arrayContaining(['google.com', 't.co', 'bing.com']));
      const { version } = await h.deps.dataVersions!.closedHours(projectId);
      // The imported session's first event: the window's own floorless mark, measured beside the floor.
      expect(h.deps.openFloors!.get(windowFloorKey(projectId, version, windowCut))).toBe(windowCut - 50 * MINUTE);
      // With the floor bound, the open sessions' read is left the granule that holds the window's events: not the later ones.
      const q: PlanInput = { projectId, period: previous, metrics: ['visitors'], dimensions: ['source'], filters: [], orderBy: [['visitors', 'desc']], limit: 10, offset: 0 };
      const binder = new Binder({
        ...rawParams(h.deps, projectId, previous),
        ...openParams(windowCut, null, windowTo),
        [MEASURED_FLOOR_PARAM]: toClickHouseDateTime64(windowCut - 50 * MINUTE),
        partKey: 'summed',
      });
      const rs = await h.deps.clickhouse.query({ query: `EXPLAIN ESTIMATE ${readPartsSql(q, binder)}`, query_params: binder.params, format: 'JSONEachRow' });
      const read = Number((await rs.json<{ table: string; rows: string }>()).find((r) => r.table === 'events')?.rows ?? 0);
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(2 * 8192);
      // Asked again later in the hour, the answer still holds: the session's event after the old end now counts.
      expect((await agreeAt(NOW + 15 * MINUTE, projectId)).find((r) => r.source === 't.co')?.pageviews).toBe(3);
    });

    it('is left to the whole pass while its window reaches past the closed hours; a comparison ending at a day’s end is read from a part of all its visits', async () => {
      const projectId = unique('cdv-compare');
      await insertEvents(h.deps.rowStore, projectId, [
        makeEvent({ ts: NOW - 3 * HOUR, visitor: 1, referrerSource: 'google.com' }),
        makeEvent({ ts: NOW - 45 * MINUTE, visitor: 1, path: '/pricing' }),
        makeEvent({ ts: NOW - 35 * DAY, visitor: 2 }),
      ]);
      // A range of the last days whose end follows the clock, 20 minutes back: its hour is the one in progress.
      const week = resolvePeriod('7d', 'UTC', NOW);
      const endingAt = (end: number): ResolvedPeriod => ({ ...week, now: end, to: end + 1, endFollowsClock: true });
      const recent = endingAt(NOW - 20 * MINUTE);
      expect(shape(await sinceCut(projectId, recent))).toEqual(shape(await wholePass(projectId, recent)));
      expect(await storedParts(projectId)).toEqual([]);
      // 40 minutes back, its hour and window (to the cut) are closed: a part.
      const closed = endingAt(NOW - 40 * MINUTE);
      expect(shape(await sinceCut(projectId, closed))).toEqual(shape(await wholePass(projectId, closed)));
      expect((await storedParts(projectId)).map(([key]) => key.includes(':w'))).toEqual([true]);
      const pastWeek = comparePeriod(resolveCustomRange('2026-02-01', '2026-02-07', 'UTC', NOW), 'previous_period');
      expect(shape(await sinceCut(projectId, pastWeek))).toEqual(shape(await wholePass(projectId, pastWeek)));
      expect(await storedParts(projectId)).toHaveLength(2);
    });
  });

  it('a session kept going by a vitals event alone is open: a later pageview joining it is counted once', async () => {
    const period = resolvePeriod('7d', 'UTC', NOW);
    const projectId = unique('cdv-vitals');
    await insertEvents(h.deps.rowStore, projectId, [
      makeEvent({ ts: OPEN_FROM - 5 * MINUTE, referrerSource: 'google.com' }),
      makeEvent({ ts: OPEN_FROM + 10 * MINUTE, kind: 'vitals' }),
    ]);
    expect(shape(await sinceCut(projectId, period))).toEqual(shape(await wholePass(projectId, period)));
    // Within the idle time of the vitals event: ingestion joins it to the session.
    await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: CUT + 5 * MINUTE, path: '/later' })]);
    const rows = await sinceCut(projectId, period);
    expect(shape(rows)).toEqual(shape(await wholePass(projectId, period)));
    expect(rows).toEqual([{ source: 'google.com', pageviews: 2, visitors: 1, viewedVisits: 1, bounces: 0, visitPageviews: 2 }]);
  });

  it('a session whose only event since open-from lies after now is open: its events before now count once, the later ones not at all', async () => {
    const period = resolvePeriod('7d', 'UTC', NOW);
    const projectId = unique('cdv-future');
    // As an import may write them: a visit begun before open-from whose next event is stamped two hours ahead.
    await insertEvents(h.deps.rowStore, projectId, [
      makeEvent({ ts: OPEN_FROM - 20 * MINUTE, visitor: 1, referrerSource: 'google.com' }),
      makeEvent({ ts: NOW + 2 * HOUR, visitor: 1, path: '/later' }),
      makeEvent({ ts: NOW + 2 * HOUR + 1000, visitor: 1, kind: 'custom', eventName: 'signup' }),
      makeEvent({ ts: NOW - 2 * DAY, visitor: 2 }),
    ]);
    const rows = await sinceCut(projectId, period);
    expect(shape(rows)).toEqual(shape(await wholePass(projectId, period)));
    const visit = (source: string) => ({ source, pageviews: 1, visitors: 1, viewedVisits: 1, bounces: 1, visitPageviews: 1 });
    expect(rows).toEqual([visit('(direct)'), visit('google.com')]);
  });

  it('a first ask is answered by the whole pass and its part summed after it, once for asks at once; without background work, before the answer', async () => {
    const projectId = unique('cdv-once');
    const period = resolvePeriod('30d', 'UTC', NOW);
    await insertThreeVisits(projectId);
    const whole = shape(await wholePass(projectId, period));
    const visit = (source: string, pageviews: number, bounces: number) => ({ source, pageviews, visitors: 1, viewedVisits: 1, bounces, visitPageviews: pageviews });
    expect(whole).toEqual([visit('google.com', 2, 0), visit('(direct)', 1, 1), visit('t.co', 1, 1)]);

    // Background work held until released: the answers come first, one task per part.
    const held: (() => Promise<unknown>)[] = [];
    const keys: string[] = [];
    const holding: Background = { run: (key, task) => void (keys.push(key), held.push(task)), settled: async () => {} };
    const ask = () => runQuestion({ ...h.deps, background: holding }, projectId, period, BY_SOURCE);
    for (const a of await Promise.all([ask(), ask(), ask()])) expect(shape(a)).toEqual(whole);
    expect(await storedParts(projectId)).toEqual([]);
    // One part, and the floorless mark and the open sessions' floor beside it.
    expect([...new Set(keys)].map((key) => key.split(':')[0]).sort()).toEqual(['floorless', 'open-floor', 'visit-parts']);
    // The process's own background work runs one task per key, however often it is asked.
    const background = backgroundTasks();
    for (const [i, task] of held.entries()) background.run(keys[i]!, task);
    await background.settled();
    // The marker row and one row per source before the cut (t.co came after it), once.
    expect(await storedParts(projectId)).toEqual([[expect.any(String), 3]]);
    expect(shape(await ask())).toEqual(whole);

    // Without background work (Workers) each ask sums a missing part first: fills at once share a deduplication token.
    const other = resolvePeriod('7d', 'UTC', NOW);
    const inline = () => runQuestion({ ...h.deps, background: undefined }, projectId, other, BY_SOURCE);
    const answers = await Promise.all([inline(), inline(), inline()]);
    for (const a of answers) expect(shape(a)).toEqual(shape(await wholePass(projectId, other)));
    expect(await storedParts(projectId)).toHaveLength(2);
    expect((await storedParts(projectId)).map(([, n]) => n)).toEqual([3, 3]);
  });

  it('reads a part it saw stored without looking for its marker, until retention may drop it; another process looks first', async () => {
    const projectId = unique('cdv-known');
    const period = resolvePeriod('30d', 'UTC', NOW);
    await insertEvents(h.deps.rowStore, projectId, [
      makeEvent({ ts: NOW - 3 * DAY, visitor: 1, referrerSource: 'google.com' }),
      makeEvent({ ts: NOW - 2 * DAY, visitor: 2 }),
      makeEvent({ ts: SINCE_CUT, visitor: 3, referrerSource: 't.co' }),
    ]);
    const whole = shape(await wholePass(projectId, period));
    const sent: string[] = [];
    const spying = (known: StoredParts) => ({ ...h.deps, storedParts: known, clickhouse: withQuery(h.deps.clickhouse, (params) => (sent.push(params.query), h.deps.clickhouse.query(params))) });
    /** The answer and how many times the part's marker was looked for. */
    const ask = async (known: StoredParts) => {
      sent.length = 0;
      const rows = shape(await runQuestion(spying(known), projectId, period, BY_SOURCE));
      await h.deps.background!.settled();
      return [rows, sent.filter((sql) => sql === PART_EXISTS_SQL).length];
    };
    const known = new StoredParts();
    // Missing (summed after the answer, its marker read back and kept), then read alone.
    expect(await ask(known)).toEqual([whole, 2]);
    expect(await ask(known)).toEqual([whole, 0]);
    expect(await ask(known)).toEqual([whole, 0]);
    // A process that has not seen it looks for it.
    expect(await ask(new StoredParts())).toEqual([whole, 1]);
    // Kept until an hour before the parts' retention (two days) may drop it, counted from when ClickHouse stored it.
    const [[partKey]] = await storedParts(projectId);
    const rs = await h.deps.clickhouse.query({ query: 'SELECT toUnixTimestamp(min(created)) AS created FROM visit_parts WHERE project_id = {projectId:String} AND marker = 1', query_params: { projectId }, format: 'JSONEachRow' });
    const created = Number((await rs.json<{ created: number }>())[0]!.created) * 1000;
    const key = storedPartKey(projectId, 'visit_parts', partKey!);
    expect(known.stored(key, created + 2 * DAY - HOUR - 1)).toBe(true);
    expect(known.stored(key, created + 2 * DAY - HOUR)).toBeUndefined();
    // Dropped (as retention drops it): a process that looks for it answers by the whole pass, and its fill (a token
    // seen before: nothing stored) reads back no marker, so the next ask looks again.
    await h.deps.clickhouse.command({ query: 'ALTER TABLE visit_parts DELETE WHERE project_id = {projectId:String}', query_params: { projectId }, clickhouse_settings: { mutations_sync: '2' } });
    const dropped = new StoredParts();
    expect(await ask(dropped)).toEqual([whole, 2]);
    expect(await ask(dropped)).toEqual([whole, 2]);
  });

  it('reads a part only after its marker was found: a part that lands while the look-up waits is read whole, not its open visits alone', async () => {
    const projectId = unique('cdv-landing');
    const period = resolvePeriod('30d', 'UTC', NOW);
    await insertThreeVisits(projectId);
    const whole = shape(await wholePass(projectId, period));
    // The look-up for the marker is held while another process sums the part (without background work: before its answer);
    // every other statement goes at once, so a read sent beside the look-up reads before the part lands.
    let lookUpHeld!: () => void;
    const held = new Promise<void>((resolve) => (lookUpHeld = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reads: Promise<unknown>[] = [];
    const clickhouse = withQuery(h.deps.clickhouse, async (params) => {
      if (params.query === PART_EXISTS_SQL) {
        lookUpHeld();
        await released;
        return h.deps.clickhouse.query(params);
      }
      const answer = h.deps.clickhouse.query(params);
      reads.push(answer.catch(() => {}));
      return answer;
    });
    const waiting = { ...h.deps, clickhouse, storedParts: new StoredParts() };
    const asked = runQuestion(waiting, projectId, period, BY_SOURCE);
    await held;
    await Promise.all(reads);
    const otherProcess = { ...h.deps, background: undefined, storedParts: new StoredParts() };
    expect(shape(await runQuestion(otherProcess, projectId, period, BY_SOURCE))).toEqual(whole);
    expect(await storedParts(projectId)).toHaveLength(1);
    release();
    expect(shape(await asked)).toEqual(whole);
    await h.deps.background!.settled();
  });

  it('live events of this hour keep the part; a batch holding a closed hour’s event has it summed again', async () => {
    const projectId = unique('cdv-live');
    const period = resolvePeriod('7d', 'UTC', NOW);
    await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: NOW - 2 * DAY, visitor: 1, referrerSource: 'google.com' })]);
    // As live ingestion writes them: with their session's floor.
    const row = (ts: number, visitor: number) => ({ project_id: projectId, ts: new Date(ts).toISOString().replace('T', ' ').replace('Z', ''), session_floor: Math.floor((ts - 30 * MINUTE) / 1000), kind: 'pageview', visitor_id: String(visitor), session_id: String(visitor * 10), path: '/', referrer_source: '(direct)' });
    await sinceCut(projectId, period);
    const filled = await storedParts(projectId);
    await h.deps.sink.write('events', [row(SINCE_CUT, 2), row(CUT, 3)]);
    await h.deps.sink.flush();
    expect(shape(await sinceCut(projectId, period))).toEqual(shape(await wholePass(projectId, period)));
    expect(await storedParts(projectId)).toEqual(filled);
    await h.deps.sink.write('events', [row(SINCE_CUT, 4), row(CUT - 1, 5)]);
    await h.deps.sink.flush();
    const rows = await sinceCut(projectId, period);
    expect(shape(rows)).toEqual(shape(await wholePass(projectId, period)));
    expect(rows.find((r) => r.source === '(direct)')?.visitors).toBe(4);
    expect(await storedParts(projectId)).toHaveLength(2);
  });

  it('without a readable closed-hours version, leaves the question to the whole pass', async () => {
    const period = resolvePeriod('7d', 'UTC', NOW);
    const projectId = unique('cdv-down');
    await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: NOW - 2 * DAY, referrerSource: 'google.com' }), makeEvent({ ts: SINCE_CUT, visitor: 2 })]);
    const whole = shape(await wholePass(projectId, period));
    const unreadable = { ...h.deps.dataVersions!, closedHours: () => Promise.reject(new Error('connection refused')) };
    expect(shape(await runQuestion({ ...h.deps, dataVersions: unreadable }, projectId, period, BY_SOURCE))).toEqual(whole);
    expect(shape(await runQuestion({ ...h.deps, closedHours: { projectId, state: null } }, projectId, period, BY_SOURCE))).toEqual(whole);
    expect(await storedParts(projectId)).toEqual([]);
    // A version pinned for the project (as the answer cache pins it for what it computes) is not read again.
    const pinned = await pinClosedHours(h.deps, projectId, period);
    expect(await pinClosedHours(h.deps, projectId, resolvePeriod('24h', 'UTC', NOW))).toBe(h.deps);
    expect(pinned.closedHours).toEqual({ projectId, state: await h.deps.dataVersions!.closedHours(projectId) });
    expect(shape(await runQuestion({ ...pinned, dataVersions: unreadable }, projectId, period, BY_SOURCE))).toEqual(whole);
    await h.deps.background!.settled();
    expect(await storedParts(projectId)).toHaveLength(1);
  });

  it('answers every question from parts, the exit page and entry-page filters that hold for none included', async () => {
    const period = resolvePeriod('7d', 'UTC', NOW);
    const projectId = unique('cdv-exit');
    await insertEvents(h.deps.rowStore, projectId, [
      makeEvent({ ts: NOW - 2 * DAY, path: '/a', referrerSource: 'google.com' }),
      makeEvent({ ts: NOW - 2 * DAY + 1000, path: '/b' }),
      // An open visit with no pageview before the cut: its entry page will be /later, its exit page moves there.
      makeEvent({ ts: CUT - 20 * MINUTE, visitor: 2, session: 20, kind: 'custom', eventName: 'signup', path: '/x' }),
      makeEvent({ ts: CUT - 2 * HOUR, visitor: 3, session: 30, path: '/x' }),
      // Open at the cut, then goes on: its exit page moves from /y to /z.
      makeEvent({ ts: CUT - 5 * MINUTE, visitor: 4, session: 40, path: '/y' }),
    ]);
    const questions: Question[] = [
      { metrics: ['visitors', 'pageviews', 'bounceRate'], dimensions: ['source', 'page'], filters: [{ dimension: 'country', op: 'is', values: ['US'] }] },
      { metrics: ['visitors', 'sessions'], dimensions: ['page'], filters: [{ dimension: 'entryPage', op: 'is', values: ['/a', '/later'] }] },
      { metrics: ['visitors'], dimensions: ['time:day', 'event'], filters: [{ dimension: 'page', op: 'contains', values: ['x'] }] },
      { metrics: ['visitors'], dimensions: ['exitPage'], filters: [] },
      { metrics: ['visitors'], dimensions: ['page'], filters: [{ dimension: 'exitPage', op: 'is', values: ['/b'] }] },
      { metrics: ['visitors', 'sessions'], dimensions: ['page'], filters: [{ dimension: 'entryPage', op: 'is_not', values: ['/later'] }] },
      { metrics: ['visitors'], dimensions: ['entryPage'], filters: [], fold: { as: '(none)', values: ['', '/a'] } },
    ];
    for (const q of questions) expect(shape(await sinceCut(projectId, period, q))).toEqual(shape(await wholePass(projectId, period, q)));
    expect(await storedParts(projectId)).toHaveLength(questions.length);
    // Live: each with its session's floor.
    await insertEvents(h.deps.rowStore, projectId, [
      makeEvent({ ts: SINCE_CUT, visitor: 5, path: '/c', sessionFloor: SINCE_CUT }),
      makeEvent({ ts: SINCE_CUT, visitor: 2, session: 20, path: '/later', sessionFloor: CUT - 20 * MINUTE }),
      makeEvent({ ts: SINCE_CUT, visitor: 4, session: 40, path: '/z', sessionFloor: CUT - 5 * MINUTE }),
    ]);
    for (const q of questions) expect(shape(await sinceCut(projectId, period, q))).toEqual(shape(await wholePass(projectId, period, q)));
    // Every answer came from the parts summed before those events.
    expect(await storedParts(projectId)).toHaveLength(questions.length);
    expect(shape(await sinceCut(projectId, period, questions[3]!))).toEqual(['/b', '/c', '/later', '/x', '/z'].map((exitPage) => ({ exitPage, visitors: 1 })));
    expect(shape(await sinceCut(projectId, period, questions[5]!))).toEqual(['/a', '/b', '/c', '/x', '/y', '/z'].map((page) => ({ page, visitors: 1, sessions: 1 })));
    expect(shape(await sinceCut(projectId, period, questions[1]!))).toEqual(['/a', '/b', '/later', '/x'].map((page) => ({ page, visitors: 1, sessions: 1 })));
  });

  describe('the open visits read events from their floor on', () => {
    // Months no other test here writes: what a read takes from the events table is this project's alone.
    const now = Date.parse('2026-07-15T12:30:00Z');
    const cut = now - 30 * MINUTE;
    /** The harness's deps at now (the harness starts before the tests run). */
    const at = () => ({ ...h.deps, clock: fixedClock(now) });
    const period = resolvePeriod('30d', 'UTC', now);
    /** Three granules (8,192 rows each) of visits over ten days ending four days before now. */
    const tenDaysOfVisits = () => Array.from({ length: 3 * 8192 }, (_, i) => makeEvent({ ts: now - 14 * DAY + i * 35_000, visitor: i + 1, referrerSource: 'google.com' }));
    /**
     * The events rows a parts read's key analysis leaves to read (ClickHouse's EXPLAIN ESTIMATE: what the probe sees),
     * with the project's floorless mark as the read finds it.
     */
    const eventsToRead = async (projectId: string) => {
      const q: PlanInput = { projectId, period, metrics: ['visitors'], dimensions: ['source'], filters: [], orderBy: [['visitors', 'desc']], limit: 10, offset: 0 };
      const { floorlessFrom } = await h.deps.dataVersions!.closedHours(projectId);
      const binder = new Binder({ ...rawParams(at(), projectId, period), ...openParams(cut, floorlessFrom), partKey: 'summed' });
      const rs = await h.deps.clickhouse.query({ query: `EXPLAIN ESTIMATE ${readPartsSql(q, binder)}`, query_params: binder.params, format: 'JSONEachRow' });
      return Number((await rs.json<{ table: string; rows: string }>()).find((r) => r.table === 'events')?.rows ?? 0);
    };
    /** The answer from parts (after the first ask summed one) is the whole pass's; `parts` have been summed in all. */
    const expectPartsAnswerAsWhole = async (projectId: string, parts = 1) => {
      const whole = await runQuestion({ ...at(), dataVersions: undefined, closedHours: undefined }, projectId, period, BY_SOURCE);
      await runQuestion(at(), projectId, period, BY_SOURCE);
      await h.deps.background!.settled();
      expect(shape(await runQuestion(at(), projectId, period, BY_SOURCE))).toEqual(shape(whole));
      expect((await storedParts(projectId)).length).toBe(parts);
    };

    it('skip the days before the smallest floor, unless one of the sessions has none', async () => {
      const projectId = unique('cdv-floor');
      // In one insert (one part, whose range of times spans them all, so only its key can leave days out): the ten days
      // of visits and a live visit begun before the cut that goes on after it.
      const floor = cut - 10 * MINUTE - 30 * MINUTE;
      await insertEvents(h.deps.rowStore, projectId, [
        ...tenDaysOfVisits(),
        makeEvent({ ts: cut - 10 * MINUTE, visitor: 500_000, session: 900_001, referrerSource: 't.co', sessionFloor: floor }),
        makeEvent({ ts: now - 10 * MINUTE, visitor: 500_000, session: 900_001, path: '/pricing', sessionFloor: floor }),
      ]);
      // The visit's two events, last in key order, and the granule before them (its last mark is their day), not the other two.
      expect(await eventsToRead(projectId)).toBe(8192 + 2);
      // An imported event since the cut (no floor): until its sessions' earliest event is measured (the floorless mark),
      // every event of the period may belong to its session, so all are probed.
      await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: now - 5 * MINUTE, visitor: 600, session: 900_002 })]);
      expect(await eventsToRead(projectId)).toBe(3 * 8192 + 3);
      await expectPartsAnswerAsWhole(projectId);
      // The first ask measured the mark in the background: the import's one session begins after the live visit's floor.
      expect((await h.deps.dataVersions!.closedHours(projectId)).floorlessFrom).toBe(now - 5 * MINUTE);
      expect(await eventsToRead(projectId)).toBe(8192 + 3);
      // An imported session reaching back four days (its events in a part of their own, at the end of the key order): the
      // import moved the version, so the mark is measured again, and the read takes that day's events on.
      await insertEvents(h.deps.rowStore, projectId, [
        makeEvent({ ts: now - 4 * DAY, visitor: 700, session: 900_003, referrerSource: 'news.ycombinator.com' }),
        makeEvent({ ts: now - 2 * MINUTE, visitor: 700, session: 900_003, path: '/docs' }),
      ]);
      expect((await h.deps.dataVersions!.closedHours(projectId)).floorlessFrom).toBeNull();
      await expectPartsAnswerAsWhole(projectId, 2);
      expect((await h.deps.dataVersions!.closedHours(projectId)).floorlessFrom).toBe(now - 4 * DAY);
    });

    it('bind the floor measured after a first ask: the same answer, and the open sessions read from it', async () => {
      const projectId = unique('cdv-measured');
      const floor = cut - 10 * MINUTE - 30 * MINUTE;
      await insertEvents(h.deps.rowStore, projectId, [
        makeEvent({ ts: now - 3 * DAY, visitor: 1, session: 1, referrerSource: 'google.com' }),
        // A live visit begun before the cut that goes on after it: its first event decides its source.
        makeEvent({ ts: cut - 10 * MINUTE, visitor: 2, session: 2, referrerSource: 't.co', sessionFloor: floor }),
        makeEvent({ ts: now - 10 * MINUTE, visitor: 2, session: 2, path: '/pricing', sessionFloor: floor }),
      ]);
      const sent: string[] = [];
      const spying = () => ({ ...at(), clickhouse: withQuery(h.deps.clickhouse, (params) => (sent.push(params.query), h.deps.clickhouse.query(params))) });
      const whole = async () => shape(await runQuestion({ ...at(), dataVersions: undefined, closedHours: undefined }, projectId, period, BY_SOURCE));
      const ask = async () => {
        sent.length = 0;
        const rows = shape(await runQuestion(spying(), projectId, period, BY_SOURCE));
        await h.deps.background!.settled();
        return rows;
      };
      const measuredRead = () => sent.some((sql) => sql.includes(`{${MEASURED_FLOOR_PARAM}:DateTime64(3, 'UTC')}`));
      // The first ask measures the floorless mark, which is part of what a floor holds for; the second the floor under it.
      expect(await ask()).toEqual(await whole());
      expect(await ask()).toEqual(await whole());
      expect(measuredRead()).toBe(false);
      const { version, floorlessFrom } = await h.deps.dataVersions!.closedHours(projectId);
      const key = openFloorKey(projectId, version, cut, floorlessFrom);
      expect(h.deps.openFloors!.get(key)).toBe(floor);
      expect(await ask()).toEqual(await whole());
      expect(measuredRead()).toBe(true);
      // A visit begun after the measurement is read from the same floor, its version unchanged.
      await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: now - 5 * MINUTE, visitor: 3, session: 3, referrerSource: 'bing.com', sessionFloor: now - 35 * MINUTE })]);
      expect((await h.deps.dataVersions!.closedHours(projectId)).version).toBe(version);
      expect(await ask()).toEqual(await whole());
      expect(measuredRead()).toBe(true);
      expect((await ask()).map((r) => r.source)).toContain('bing.com');
      // The bound floor is what bounds the read: one after the visit's first event would lose its source.
      h.deps.openFloors!.set(key, cut);
      expect((await ask()).map((r) => r.source)).not.toContain('t.co');
      h.deps.openFloors!.set(key, floor);
      expect(await ask()).toEqual(await whole());
    });

    it('bind at most open-from: a visit begun after the measurement may be stamped before the only open one', async () => {
      const projectId = unique('cdv-capped');
      await insertEvents(h.deps.rowStore, projectId, [
        makeEvent({ ts: now - 3 * DAY, visitor: 1, session: 1, referrerSource: 'google.com' }),
        // The only open visit, begun at now (its floor as tight as can be).
        makeEvent({ ts: now, visitor: 2, session: 2, referrerSource: 't.co', sessionFloor: now }),
      ]);
      const whole = async () => shape(await runQuestion({ ...at(), dataVersions: undefined, closedHours: undefined }, projectId, period, BY_SOURCE));
      const ask = async () => {
        const rows = shape(await runQuestion(at(), projectId, period, BY_SOURCE));
        await h.deps.background!.settled();
        return rows;
      };
      expect(await ask()).toEqual(await whole());
      expect(await ask()).toEqual(await whole());
      const { version, floorlessFrom } = await h.deps.dataVersions!.closedHours(projectId);
      expect(h.deps.openFloors!.get(openFloorKey(projectId, version, cut, floorlessFrom))).toBe(cut - 30 * MINUTE);
      // Written after the measurement, a second earlier, within this hour: the version stays.
      await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: now - 1000, visitor: 3, session: 3, referrerSource: 'bing.com', sessionFloor: now - 1000 })]);
      expect((await h.deps.dataVersions!.closedHours(projectId)).version).toBe(version);
      const rows = await ask();
      expect(rows).toEqual(await whole());
      expect(rows.map((r) => r.source)).toContain('bing.com');
    });

    it('read none with no event since open-from', async () => {
      const projectId = unique('cdv-quiet');
      // A quiet site: nobody since the ten days. The smallest floor of no events would be 0 (1970): every event of the period probed for no session.
      await insertEvents(h.deps.rowStore, projectId, tenDaysOfVisits());
      expect(await eventsToRead(projectId)).toBe(0);
      await expectPartsAnswerAsWhole(projectId);
    });
  });

  it('ranked by visitors, reads the stored rows that can reach the page: the open visits can lift a row from below it', async () => {
    const period = resolvePeriod('7d', 'UTC', NOW);
    const projectId = unique('cdv-ranked');
    // Closed visits: /p0 … /p19 with 600, 575, … 125 visitors; /rising with 410, and 150 more in open visits
    // (each with the one event since openFrom that makes it open): 560 in all, third on a page of five.
    const events: GenEvent[] = [];
    let visitor = 0;
    const visits = (path: string, n: number, ts: number) => {
      for (let i = 0; i < n; i++) events.push(makeEvent({ ts: ts + i, visitor: ++visitor, path }));
    };
    for (let i = 0; i < 20; i++) visits(`/p${i}`, 600 - 25 * i, NOW - 2 * DAY);
    visits('/rising', 410, NOW - 2 * DAY);
    visits('/rising', 150, SINCE_CUT);
    await insertEvents(h.deps.rowStore, projectId, events);
    const page: Question = { metrics: ['visitors', 'pageviews'], dimensions: ['page'], filters: [], limit: 3, offset: 2 };
    const rows = await sinceCut(projectId, period, page);
    expect(shape(rows)).toEqual(shape(await wholePass(projectId, period, page)));
    expect(rows.map((r) => [r.page, r.visitors])).toEqual([['/rising', 560], ['/p2', 550], ['/p3', 525]]);

    // What the stored branch keeps: the fifth count (500) less 4 %, the 150 events since openFrom and 16 leaves 314 and
    // up: /rising's 410 among them, and /p0 … /p11 (325). Without the open visits' bound /rising would be left out.
    const [[partKey]] = await storedParts(projectId);
    const binder = new Binder({ projectId, partKey, ...openParams(CUT, null) });
    const q: PlanInput = { projectId, period, metrics: ['visitors'], dimensions: ['page'], filters: [], orderBy: [['visitors', 'desc']], limit: 3, offset: 2 };
    const kept = async (kind: 'closed' | 'ended') => {
      const rs = await h.deps.clickhouse.query({ query: `SELECT value FROM visit_parts WHERE ${PART_ROWS} AND ${mayReachPage(q, binder, kind)} ORDER BY value`, query_params: binder.params, format: 'JSONEachRow' });
      return (await rs.json<{ value: string }>()).map((r) => r.value);
    };
    expect(await kept('closed')).toEqual(['/p0', '/p1', '/p10', '/p11', '/p2', '/p3', '/p4', '/p5', '/p6', '/p7', '/p8', '/p9', '/rising']);
    // A part of every visit has no open ones: 500 less 4 % and 16 is 464.
    expect(await kept('ended')).toEqual(['/p0', '/p1', '/p2', '/p3', '/p4', '/p5']);
    // Fewer kept rows than the page reaches: every row is read.
    const deep = await sinceCut(projectId, period, { ...page, limit: 30, offset: 0 });
    expect(shape(deep)).toEqual(shape(await wholePass(projectId, period, { ...page, limit: 30, offset: 0 })));
    expect(deep).toHaveLength(21);
    // Only where rows may be many: a part of a few countries is read whole, as is a page of a fold's rows.
    expect(rankedByVisitors(q)).toBe(true);
    expect(rankedByVisitors({ ...q, dimensions: ['country'] })).toBe(false);
    expect(rankedByVisitors({ ...q, dimensions: ['country', 'device'] })).toBe(true);
    expect(rankedByVisitors({ ...q, fold: { as: '(none)', values: [''] } })).toBe(false);
    expect(rankedByVisitors({ ...q, orderBy: [['pageviews', 'desc']] })).toBe(false);
  });

  it('leaves periods without closed hours to the whole pass', () => {
    expect(closedHoursCut(h.deps, resolvePeriod('7d', 'UTC', NOW))).toBe(CUT);
    // Today has closed hours too, except in its first hour.
    expect(closedHoursCut(h.deps, resolvePeriod('today', 'UTC', NOW))).toBe(CUT);
    const midnight = NOW - 12 * HOUR - 30 * MINUTE;
    expect(closedHoursCut({ clock: fixedClock(midnight + 30 * MINUTE) }, resolvePeriod('today', 'UTC', midnight + 30 * MINUTE))).toBeNull();
    // 24h starts at a new instant at every request: a part would be summed each time.
    expect(closedHoursCut(h.deps, resolvePeriod('24h', 'UTC', NOW))).toBeNull();
    // A range that ended before now has no part since the cut.
    expect(closedHoursCut(h.deps, resolveCustomRange('2026-02-01', '2026-02-10', 'UTC', NOW))).toBeNull();
    expect(closedHoursCut(h.deps, resolvePeriod('today', 'Asia/Tokyo', NOW))).toBe(CUT);
    // For a minute after the hour begins the cut stays at the one before (writers' clocks may lag).
    const justAfter = { clock: fixedClock(CUT + 30_000) };
    expect(closedHoursCut(justAfter, resolvePeriod('7d', 'UTC', CUT + 30_000))).toBe(CUT - HOUR);
    const later = { clock: fixedClock(CUT + 61_000) };
    expect(closedHoursCut(later, resolvePeriod('7d', 'UTC', CUT + 61_000))).toBe(CUT);
  });
});
