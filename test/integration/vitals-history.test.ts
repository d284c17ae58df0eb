import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { withQuery } from '../../src/adapters/clickhouse.js';
import { moveVitalsHistory, VitalsHistoryMismatch } from '../../src/reports/vitals-history.js';
import { VitalsMark } from '../../src/reports/vitals-mark.js';
import { newProject } from '../helpers/report-fixtures.js';
import { useHarness } from '../helpers/setup.js';
import { expectPerformance, generateVitals, insertVitals, setVitalsMarks, type Vitals } from '../helpers/vitals-reference.js';

/**
 * `npm run admin -- vitals:history` on a store upgraded with vitals in it: the history before the
 * mark of migration 0028 is copied into `vitals` once, the mark drops to 0, and performance answers
 * the same from the table alone.
 */
const DAY = 86_400_000;
const SINCE = Date.parse('2026-03-01T12:34:56.789Z');
const LATER = SINCE + 10 * DAY;
const ctx = useHarness(['alice'], { clock: fixedClock(LATER) });
const sync = { mutations_sync: '2' } as const;

async function rowsOf(query: string, params: Record<string, unknown> = {}) {
  return (await (await ctx.h.deps.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' })).json()) as Record<string, unknown>[];
}

/** Every vitals row of a table, in one order, to compare the tables' copies row for row. */
const VITALS_ROWS = "SELECT project_id, ts, path, lcp, inp, cls, fcp, ttfb FROM {table:Identifier} WHERE kind = 'vitals' ORDER BY ALL";
const tableRows = (table: 'events' | 'vitals') => rowsOf(VITALS_ROWS, { table });

/**
 * A store upgraded at SINCE: a project's vitals before it are in `events` alone, except those
 * imported after the upgrade (page-0's, in both tables), plus rows of a run cut short (page-1's
 * again in `vitals`).
 */
async function upgradedStore(seed: number) {
  const { id } = await newProject(ctx.h, ctx.alice, 'Europe/Berlin');
  const rows = generateVitals(seed, LATER);
  await insertVitals(ctx.h, id, rows);
  await ctx.h.deps.clickhouse.command({
    query: "ALTER TABLE vitals DELETE WHERE project_id = {id:String} AND ts < fromUnixTimestamp64Milli({since:Int64}) AND path != '/page-0'",
    query_params: { id, since: SINCE },
    clickhouse_settings: sync,
  });
  await insertVitals(ctx.h, id, rows.filter((r) => r.ts < SINCE && r.path === '/page-1'), 'vitals');
  return { id, rows };
}

/** Performance over 7d, 30d and 90d equals the TypeScript reference over `rows`. */
const expectPeriods = (projectId: string, rows: Vitals[], vitalsMark: VitalsMark | undefined) =>
  expectPerformance(ctx.h, projectId, rows, { vitalsMark, queries: [{ period: '7d' }, { period: '30d' }, { period: '90d' }] });

const vitalsBeforeMark = async () => Number((await rowsOf("SELECT count() AS n FROM events WHERE kind = 'vitals' AND ts < fromUnixTimestamp64Milli({since:Int64})", { since: SINCE }))[0]!.n);

describe('moving the vitals history under the mark', () => {
  it('copies the vitals before the mark once, lowers the mark to 0, and performance answers the same from the table alone', async () => {
    await setVitalsMarks(ctx.h, [SINCE, SINCE + DAY]);
    const a = await upgradedStore(11);
    const b = await upgradedStore(12);
    const before = [...a.rows, ...b.rows].filter((r) => r.ts < SINCE).length;
    expect(before).toBeGreaterThan(200);
    expect(await vitalsBeforeMark()).toBe(before);
    expect(await tableRows('vitals')).not.toEqual(await tableRows('events'));
    for (const { id, rows } of [a, b]) await expectPeriods(id, rows, new VitalsMark());

    expect(await moveVitalsHistory(ctx.h.deps.clickhouse)).toEqual({ moved: before, previousMark: new Date(SINCE).toISOString() });
    expect(await new VitalsMark().since(ctx.h.deps.clickhouse)).toBe(0);
    expect(await tableRows('vitals')).toEqual(await tableRows('events'));
    // With the mark at 0 the report reads `vitals` alone; a process that kept the old mark stays right too.
    const keptOld = new VitalsMark();
    await setVitalsMarks(ctx.h, [SINCE]);
    await keptOld.since(ctx.h.deps.clickhouse);
    await setVitalsMarks(ctx.h, [SINCE, 0]);
    for (const { id, rows } of [a, b]) {
      for (const mark of [new VitalsMark(), undefined, keptOld]) await expectPeriods(id, rows, mark);
    }
    expect(await moveVitalsHistory(ctx.h.deps.clickhouse)).toEqual({ moved: 0, previousMark: null });
    expect(await tableRows('vitals')).toEqual(await tableRows('events'));
  });

  it('runs again after a run cut short before the mark moved, and copies each row once', async () => {
    await setVitalsMarks(ctx.h, [SINCE]);
    const { id, rows } = await upgradedStore(13);
    const moved = await vitalsBeforeMark();
    // The first run copied everything but did not get to store the new mark.
    expect(await moveVitalsHistory(ctx.h.deps.clickhouse)).toMatchObject({ moved });
    await setVitalsMarks(ctx.h, [SINCE]);
    expect(await moveVitalsHistory(ctx.h.deps.clickhouse)).toMatchObject({ moved });
    expect(await tableRows('vitals')).toEqual(await tableRows('events'));
    await expectPeriods(id, rows, new VitalsMark());
  });

  it('keeps the mark when vitals before it are written while it copies, and a later run moves them', async () => {
    await setVitalsMarks(ctx.h, [SINCE]);
    const { id, rows } = await upgradedStore(14);
    // An import's copy in the view landing after the delete, of a row the copy took from events too.
    const late = rows.find((r) => r.ts < SINCE)!;
    let injected: Promise<void> | undefined;
    const racing = withQuery(ctx.h.deps.clickhouse, async (params) => {
      // Both tallies wait for it, so both see it.
      if (params.query.includes('checksum')) await (injected ??= insertVitals(ctx.h, id, [late], 'vitals'));
      return ctx.h.deps.clickhouse.query(params);
    });
    await expect(moveVitalsHistory(racing)).rejects.toThrow(VitalsHistoryMismatch);
    expect(injected).toBeDefined();
    expect(await new VitalsMark().since(ctx.h.deps.clickhouse)).toBe(SINCE);
    await expectPeriods(id, rows, new VitalsMark());
    expect(await moveVitalsHistory(ctx.h.deps.clickhouse)).toMatchObject({ moved: await vitalsBeforeMark() });
    expect(await tableRows('vitals')).toEqual(await tableRows('events'));
    await expectPeriods(id, rows, new VitalsMark());
  });

  it('refuses a store without the mark of migration 0028 and leaves it as it is', async () => {
    await setVitalsMarks(ctx.h, []);
    await expect(moveVitalsHistory(ctx.h.deps.clickhouse)).rejects.toThrow('no vitals mark is stored: migration 0028 has not run on this store');
    expect(await rowsOf('SELECT count() AS n FROM vitals_since')).toEqual([{ n: '0' }]);
  });
});
