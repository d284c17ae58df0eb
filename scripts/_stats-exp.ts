import { Session } from 'chdb';
import { STATS_SQL } from '../src/reports/sql/stats.js';
import { TIMESERIES_SQL } from '../src/reports/sql/timeseries.js';
import { withoutRawSlices } from '../src/reports/sql/window.js';
const s = new Session(process.argv[2] + '/clickhouse');
const DAY = 86400000; const now = Date.now();
const dayTo = Math.floor(now / DAY) * DAY + DAY, dayFrom = dayTo - 30 * DAY;
const fmt = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
const fmt3 = (ms: number) => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
const params: Record<string, unknown> = { projectId: 'prj_benchdashboard000000', from: fmt3(dayFrom), to: fmt3(now), rollupFrom: fmt(dayFrom), rollupTo: fmt(dayTo), dayFrom: fmt(dayFrom), dayTo: fmt(dayTo), tz: 'UTC', limit: 10, hourBase: fmt(dayFrom), lastHour: 0 };
async function time(label: string, sql: string, n = 31) {
  const q = () => s.queryBindAsync(sql, params as never, { format: 'JSONEachRow' });
  for (let i = 0; i < 3; i++) await q();
  const t: number[] = [];
  for (let i = 0; i < n; i++) { const a = performance.now(); await q(); t.push(performance.now() - a); }
  t.sort((a, b) => a - b);
  console.log(label.padEnd(40), 'p50', t[Math.floor(n / 2)]!.toFixed(2), 'min', t[0]!.toFixed(2));
}
const W = "project_id = {projectId:String} AND bucket >= {dayFrom:DateTime('UTC')} AND bucket < {dayTo:DateTime('UTC')}";
await time('stats as app', withoutRawSlices(STATS_SQL.rollup));
await time('stats 1d only', `SELECT sum(pageviews) AS pageviews, uniqCombinedMerge(14)(visitors) AS visitors, uniqCombinedMerge(14)(sessions) AS sessions, sum(duration_ms) AS duration_total, uniqCombinedMerge(14)(leave_sessions) AS leave_sessions FROM stats_1d WHERE ${W}`);
await time('stats 1d sums only', `SELECT sum(pageviews), sum(duration_ms) FROM stats_1d WHERE ${W}`);
await time('stats 1d visitors only', `SELECT uniqCombinedMerge(14)(visitors) FROM stats_1d WHERE ${W}`);
await time('timeseries as app', withoutRawSlices(TIMESERIES_SQL.day.rollup));
await time('select 1', 'SELECT {limit:UInt32}');
