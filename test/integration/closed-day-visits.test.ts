import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { VISIT_SUMS } from '../../src/analysis/plan.js';
import { runQuestion, type AnswerRow } from '../../src/analysis/run.js';
import { closedDaysCut, pinClosedDays, visitsBySourceSinceCut } from '../../src/reports/closed-day-visits.js';
import { resolvePeriod, type ResolvedPeriod } from '../../src/reports/periods.js';
import { resolveCustomRange } from '../../src/reports/range.js';
import { DIRECT_FOLD } from '../../src/reports/visits-by-source.js';
import { insertEvents, makeEvent, visitsArb, type GenEvent } from '../helpers/events-gen.js';
import { closeHarness, createHarness, unique, type Harness } from '../helpers/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Noon UTC: the cut (the last UTC midnight) is 12 h back, the period's start days back. */
const NOW = Date.parse('2026-03-08T12:00:00Z');
const CUT = NOW - 12 * HOUR;
const clock = fixedClock(NOW);

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ clock });
});
afterAll(closeHarness);

/** The pipeline's one pass over the period's visits: what the parts must add up to. */
const wholePass = (projectId: string, period: ResolvedPeriod) =>
  runQuestion(h.deps, projectId, period, { metrics: ['pageviews', 'visitors', ...VISIT_SUMS], dimensions: ['source'], filters: [], fold: DIRECT_FOLD, limit: 4_294_967_295 });

const sinceCut = async (projectId: string, period: ResolvedPeriod) => {
  const rows = await visitsBySourceSinceCut(h.deps, projectId, period, DIRECT_FOLD);
  if (!rows) throw new Error('expected a period with closed days');
  return rows;
};

const shape = (rows: readonly AnswerRow[]) => rows.map((r) => [r.source, r.pageviews, r.visitors, r.viewedVisits, r.bounces, r.visitPageviews]);

/** Rows stored for the project's parts: [part key, rows] per part filled. */
async function storedParts(projectId: string): Promise<[string, number][]> {
  const rs = await h.deps.clickhouse.query({
    query: 'SELECT part_key, toUInt32(count()) AS n FROM visit_source_parts WHERE project_id = {projectId:String} GROUP BY part_key ORDER BY part_key',
    query_params: { projectId },
    format: 'JSONEachRow',
  });
  return (await rs.json<{ part_key: string; n: number }>()).map((r) => [r.part_key, r.n]);
}

/** Session starts around what matters: the cut, the period's start, and anywhere in the week. */
const starts = (period: ResolvedPeriod) =>
  fc.oneof(
    fc.integer({ min: CUT - 4 * HOUR, max: CUT + 2 * HOUR }),
    fc.integer({ min: period.from - 4 * HOUR, max: period.from + 2 * HOUR }),
    fc.integer({ min: period.from - DAY, max: NOW - HOUR }),
  );

describe('visits of closed days kept apart', () => {
  it('add up to the pass over the whole period: filled, kept, as sessions go on past the cut, and summed again after an import into a closed day', async () => {
    for (const timeZone of ['UTC', 'Asia/Kolkata', 'America/New_York']) {
      const period = resolvePeriod('7d', timeZone, NOW);
      await fc.assert(
        fc.asyncProperty(visitsArb(starts(period)), fc.integer({ min: 0, max: 1000 }), async (generated, pick) => {
          const projectId = unique('cdv');
          // Events after now are not part of this question (query.ts cuts at now when they exist): keep them out.
          const events = generated.filter((e) => e.ts <= NOW);
          await insertEvents(h.deps.rowStore, projectId, events);
          expect(shape(await sinceCut(projectId, period))).toEqual(shape(await wholePass(projectId, period)));
          const filled = await storedParts(projectId);
          expect(filled).toHaveLength(1);

          // Later events of a session begun before the cut (its bounce may end, its pageviews grow) and a new session:
          // the kept part is read as it is, and the sum still matches.
          const before = events.filter((e) => e.ts < CUT && e.ts >= period.from);
          const goingOn = before[pick % Math.max(1, before.length)];
          const later: GenEvent[] = [makeEvent({ ts: NOW - 1000, visitor: 77, session: 770, referrerSource: 't.co' })];
          if (goingOn) later.push({ ...goingOn, ts: NOW - 2000, kind: pick % 2 ? 'pageview' : 'custom', eventName: pick % 2 ? '' : 'signup', referrerSource: 'newsletter' });
          await insertEvents(h.deps.rowStore, projectId, later);
          expect(shape(await sinceCut(projectId, period))).toEqual(shape(await wholePass(projectId, period)));
          expect(await storedParts(projectId)).toEqual(filled);

          // An import into a closed day moves the closed-days version: the part is summed again under a new key.
          const imported: GenEvent[] = [makeEvent({ ts: CUT - 3 * HOUR, visitor: 88, session: 880, referrerSource: 'google.com' })];
          if (goingOn) imported.push({ ...goingOn, ts: CUT - 1, kind: 'custom', eventName: 'download' });
          await insertEvents(h.deps.rowStore, projectId, imported);
          expect(shape(await sinceCut(projectId, period))).toEqual(shape(await wholePass(projectId, period)));
          const refilled = await storedParts(projectId);
          expect(refilled).toHaveLength(2);
          expect(refilled).toEqual(expect.arrayContaining(filled));
        }),
        { numRuns: 6 },
      );
    }
  });

  it('a part filled by requests at once is stored once', async () => {
    const projectId = unique('cdv-once');
    const period = resolvePeriod('30d', 'UTC', NOW);
    await insertEvents(h.deps.rowStore, projectId, [
      makeEvent({ ts: NOW - 3 * DAY, visitor: 1, referrerSource: 'google.com' }),
      makeEvent({ ts: NOW - 3 * DAY + 5000, visitor: 1, path: '/pricing' }),
      makeEvent({ ts: NOW - 2 * DAY, visitor: 2 }),
      makeEvent({ ts: NOW - HOUR, visitor: 3, referrerSource: 't.co' }),
    ]);
    const answers = await Promise.all([sinceCut(projectId, period), sinceCut(projectId, period), sinceCut(projectId, period)]);
    const whole = shape(await wholePass(projectId, period));
    for (const a of answers) expect(shape(a)).toEqual(whole);
    expect(whole).toEqual([
      ['google.com', 2, 1, 1, 0, 2],
      ['(direct)', 1, 1, 1, 1, 1],
      ['t.co', 1, 1, 1, 1, 1],
    ]);
    // The marker row and one row per source, once.
    expect(await storedParts(projectId)).toEqual([[expect.any(String), 3]]);
  });

  it('live events of today keep the part; a batch holding a closed day’s event has it summed again', async () => {
    const projectId = unique('cdv-live');
    const period = resolvePeriod('7d', 'UTC', NOW);
    await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: NOW - 2 * DAY, visitor: 1, referrerSource: 'google.com' })]);
    const row = (ts: number, visitor: number) => ({ project_id: projectId, ts: new Date(ts).toISOString().replace('T', ' ').replace('Z', ''), kind: 'pageview', visitor_id: String(visitor), session_id: String(visitor * 10), path: '/', referrer_source: '(direct)' });
    await sinceCut(projectId, period);
    const filled = await storedParts(projectId);
    await h.deps.sink.write('events', [row(NOW - HOUR, 2), row(NOW - 2 * HOUR, 3)]);
    await h.deps.sink.flush();
    expect(shape(await sinceCut(projectId, period))).toEqual(shape(await wholePass(projectId, period)));
    expect(await storedParts(projectId)).toEqual(filled);
    await h.deps.sink.write('events', [row(NOW - HOUR, 4), row(CUT - 1, 5)]);
    await h.deps.sink.flush();
    const rows = await sinceCut(projectId, period);
    expect(shape(rows)).toEqual(shape(await wholePass(projectId, period)));
    expect(rows.find((r) => r.source === '(direct)')?.visitors).toBe(4);
    expect(await storedParts(projectId)).toHaveLength(2);
  });

  it('without a readable closed-days version, leaves the question to the whole pass', async () => {
    const period = resolvePeriod('7d', 'UTC', NOW);
    const unreadable = { ...h.deps.dataVersions!, closedDays: () => Promise.reject(new Error('connection refused')) };
    expect(await visitsBySourceSinceCut({ ...h.deps, dataVersions: unreadable }, unique('cdv-down'), period, DIRECT_FOLD)).toBeNull();
    expect(await visitsBySourceSinceCut({ ...h.deps, dataVersions: undefined }, unique('cdv-none'), period, DIRECT_FOLD)).toBeNull();
    // A version pinned for the project (as the answer cache pins it for what it computes) is not read again.
    const projectId = unique('cdv-pinned');
    await insertEvents(h.deps.rowStore, projectId, [makeEvent({ ts: NOW - 2 * DAY, referrerSource: 'google.com' })]);
    const pinned = await pinClosedDays(h.deps, projectId, period);
    expect(await pinClosedDays(h.deps, projectId, resolvePeriod('24h', 'UTC', NOW))).toBe(h.deps);
    expect(pinned.closedDays).toEqual({ projectId, version: await h.deps.dataVersions!.closedDays(projectId) });
    expect(shape(await sinceCut(projectId, period))).toEqual(shape((await visitsBySourceSinceCut({ ...pinned, dataVersions: unreadable }, projectId, period, DIRECT_FOLD))!));
    expect(await visitsBySourceSinceCut({ ...pinned, closedDays: { projectId, version: null } }, projectId, period, DIRECT_FOLD)).toBeNull();
  });

  it('leaves periods without closed days to the whole pass', () => {
    expect(closedDaysCut(h.deps, resolvePeriod('7d', 'UTC', NOW))).toBe(CUT);
    expect(closedDaysCut(h.deps, resolvePeriod('today', 'UTC', NOW))).toBeNull();
    // 24h starts at a new instant at every request: a part would be summed each time.
    expect(closedDaysCut(h.deps, resolvePeriod('24h', 'UTC', NOW))).toBeNull();
    // A range that ended before now has no part since the cut.
    expect(closedDaysCut(h.deps, resolveCustomRange('2026-02-01', '2026-02-10', 'UTC', NOW))).toBeNull();
    // In a zone ahead of UTC, today may start before the last UTC midnight: that slice is kept too.
    expect(closedDaysCut(h.deps, resolvePeriod('today', 'Asia/Tokyo', NOW))).toBe(CUT);
    // For a minute after midnight the cut stays at the one before (writers' clocks may lag).
    const justAfter = { clock: fixedClock(CUT + 30_000) };
    expect(closedDaysCut(justAfter, resolvePeriod('7d', 'UTC', CUT + 30_000))).toBe(CUT - DAY);
    const later = { clock: fixedClock(CUT + 61_000) };
    expect(closedDaysCut(later, resolvePeriod('7d', 'UTC', CUT + 61_000))).toBe(CUT);
  });
});
