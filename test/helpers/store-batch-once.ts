/**
 * Run as its own process (`node --import tsx test/helpers/store-batch-once.ts <dataDir> <token> <at>`):
 * opens the embedded engine on `dataDir` as a start does (migrations first), stores one fixed
 * batch of events ending at `<at>` (epoch ms) under `token`, and prints what `events` and each
 * rollup hold for its project as one JSON line. One process per run: each start of the engine is
 * a new one. The same arguments make the same rows, as a journal replays them.
 */
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { migrate } from '../../src/adapters/migrate.js';
import { ANALYTICS_TABLES } from '../../src/analytics-tables.js';
import { insertEvents, makeEvent } from './events-gen.js';

const BATCH_PROJECT = 'prj_storebatchonce0000000';

const [dataDir, token, at] = process.argv.slice(2);
if (!dataDir || !token || !Number.isFinite(Number(at))) throw new Error('usage: store-batch-once.ts <dataDir> <token> <epoch ms>');
const ch = await connectNodeClickHouse({ dataDir });
await migrate(ch.client, { retentionDays: 3650 });

// 40 pageviews of 20 visitors, 6 leaves and 4 custom events in the hour before `at`: every rollup gets rows.
const now = Number(at);
const events = [
  ...Array.from({ length: 40 }, (_, i) => makeEvent({ ts: now - 60_000 * (i + 1), visitor: 1 + (i % 20), path: `/p${i % 5}`, referrerSource: i % 2 ? 'google.com' : '(direct)' })),
  ...Array.from({ length: 6 }, (_, i) => makeEvent({ ts: now - 30_000 * (i + 1), kind: 'leave', visitor: 1 + i, durationMs: 5_000 })),
  ...Array.from({ length: 4 }, (_, i) => makeEvent({ ts: now - 45_000 * (i + 1), kind: 'custom', visitor: 1 + i, eventName: 'signup' })),
];
await insertEvents(ch.rowStore, BATCH_PROJECT, events, { token });

/** What a rollup counted of the batch: its pageviews (and stats' leaves), custom_events' events. */
const countedBy = (rollup: string): string =>
  rollup.startsWith('stats_') ? 'sum(pageviews) + sum(leaves)' : rollup.startsWith('custom_events_') ? 'sum(events)' : 'sum(pageviews)';
/** `events` and every rollup the views fill from it (the bots' rollup is fed by `bot_hits`). */
const counted: Record<string, string> = {
  events: 'count()',
  ...Object.fromEntries(ANALYTICS_TABLES.filter((t) => /_(15m|1d)$/.test(t.name) && t.name !== 'bots_15m').map((t) => [t.name, countedBy(t.name)])),
};
const held: Record<string, number> = {};
for (const [table, expression] of Object.entries(counted)) {
  const rs = await ch.client.query({ query: `SELECT ${expression} AS n FROM ${table} WHERE project_id = {p:String}`, query_params: { p: BATCH_PROJECT }, format: 'JSONEachRow' });
  held[table] = Number((await rs.json<{ n: string }>())[0]!.n);
}
console.log(JSON.stringify(held));
await ch.close();
