import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { loadMigrations, migrate } from '../../src/adapters/migrate.js';
import { resolvePeriod } from '../../src/reports/periods.js';
import { SOURCES } from '../../src/reports/planner.js';
import { periodParams, queryOne } from '../../src/reports/query.js';
import { avgVisitSeconds, STATS_SQL } from '../../src/reports/sql/stats.js';
import { insertEvents, makeEvent } from '../helpers/events-gen.js';

// Its own data directory: the database is taken to the state before migration 0020, which the
// shared test database has long passed.
const dataDir = join(tmpdir(), `sightline-leave-sessions-${process.pid}`);
const { client: ch, rowStore } = await connectNodeClickHouse({ dataDir });
afterAll(async () => {
  await ch.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const NOW = Date.parse('2026-04-20T10:20:00Z');
const HOUR = 3_600_000;
const LEAVE_MIGRATION = '0020_stats_leave_sessions.sql';
const FOLD_MIGRATION = '0021_stats_leave_sessions_folded.sql';

/** Runs every statement of the named migrations again, as a start that stopped before recording them would. */
async function runAgain(names: readonly string[]) {
  for (const m of (await loadMigrations()).filter((m) => names.includes(m.name))) for (const statement of m.statements) await ch.command({ query: statement });
}

/** The materialized views feeding the stats rollups. */
async function statsViews() {
  const rs = await ch.query({ query: "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView' AND name LIKE 'stats%' ORDER BY name", format: 'JSONEachRow' });
  return (await rs.json<{ name: string }>()).map((r) => r.name);
}

/** avgDurationSeconds of `period` from each source. */
async function averages(projectId: string, key: '30d' | 'today') {
  const params = periodParams(projectId, resolvePeriod(key, 'UTC', NOW));
  const out: Record<string, number | null> = {};
  for (const source of SOURCES) {
    out[source] = avgVisitSeconds(await queryOne({ clickhouse: ch }, STATS_SQL[source], params, { duration_total: 'number', leave_sessions: 'number' }));
  }
  return out;
}

describe('migrations 0020 and 0021: sessions with a leave event in the stats rollups', () => {
  it('counts the events stored before them (backfill), the ones after them (the stats views), each session once, also when run twice', async () => {
    // The schema as it was before 0020, with its migrations recorded as applied.
    const earlier = (await loadMigrations()).filter((m) => m.name < LEAVE_MIGRATION);
    for (const m of earlier) for (const statement of m.statements) await ch.command({ query: statement });
    await ch.command({ query: 'CREATE TABLE IF NOT EXISTS schema_migrations (name String, applied_at DateTime DEFAULT now()) ENGINE = ReplacingMergeTree ORDER BY name' });
    await ch.insert({ table: 'schema_migrations', values: earlier.map((m) => ({ name: m.name })), format: 'JSONEachRow' });

    // Before: session 10 leaves twice 10 days ago (daily rows) and once today (15-minute rows).
    await insertEvents(rowStore, 'p1', [
      makeEvent({ ts: NOW - 240 * HOUR, kind: 'leave', durationMs: 30_000, session: 10 }),
      makeEvent({ ts: NOW - 240 * HOUR + 60_000, kind: 'leave', durationMs: 10_000, session: 10 }),
      makeEvent({ ts: NOW - 2 * HOUR, kind: 'leave', durationMs: 20_000, visitor: 2, session: 20 }),
    ]);
    expect(await migrate(ch, { retentionDays: 3650 })).toEqual((await loadMigrations()).map((m) => m.name).filter((name) => name >= LEAVE_MIGRATION));
    // 0021 folded the column into the stats views: no view of its own is left to feed it.
    expect(await statsViews()).toEqual(['stats_15m_mv', 'stats_1d_from_15m_mv']);
    // After: session 20 leaves again, within the current quarter hour too; sessions 30 and 50 once.
    await insertEvents(rowStore, 'p1', [
      makeEvent({ ts: NOW - HOUR, kind: 'leave', durationMs: 15_000, visitor: 2, session: 20 }),
      makeEvent({ ts: NOW - 60_000, kind: 'leave', durationMs: 5_000, visitor: 2, session: 20 }),
      makeEvent({ ts: NOW - 3 * HOUR, kind: 'leave', durationMs: 40_000, visitor: 3, session: 30 }),
      // A past day, read from the daily rows the daily view fills.
      makeEvent({ ts: NOW - 120 * HOUR, kind: 'leave', durationMs: 40_000, visitor: 5, session: 50 }),
    ]);
    // 30d: (40 + 40 + 40 + 40) s over 4 visits; today: sessions 20 and 30, (40 + 40) / 2.
    expect(await averages('p1', '30d')).toEqual({ rollup: 40, raw: 40 });
    expect(await averages('p1', 'today')).toEqual({ rollup: 40, raw: 40 });

    // The backfill again (a start that crashed before recording 0020): nothing counts twice. Its
    // views are back beside the folded ones, as while 0021 runs on a server taking inserts: a
    // session written by both (40, today) still counts once.
    await runAgain([LEAVE_MIGRATION]);
    expect(await averages('p1', '30d')).toEqual({ rollup: 40, raw: 40 });
    await insertEvents(rowStore, 'p1', [makeEvent({ ts: NOW - 30 * 60_000, kind: 'leave', durationMs: 40_000, visitor: 4, session: 40 })]);
    expect(await averages('p1', 'today')).toEqual({ rollup: 40, raw: 40 });
    await runAgain([FOLD_MIGRATION]);
    expect(await statsViews()).toEqual(['stats_15m_mv', 'stats_1d_from_15m_mv']);
    expect(await averages('p1', '30d')).toEqual({ rollup: 40, raw: 40 });
  });
});
