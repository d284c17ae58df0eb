/**
 * Run as its own process (`node --import tsx test/helpers/store-batch-once.ts <dataDir> <token>`):
 * opens the embedded engine on `dataDir` as a start does (migrations first), stores one fixed
 * batch of events under `token`, and prints what `events` and each rollup hold for its project
 * as one JSON line. One process per run: each start of the engine is a new one.
 */
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { migrate } from '../../src/adapters/migrate.js';
import { insertEvents, makeEvent } from './events-gen.js';

const BATCH_PROJECT = 'prj_storebatchonce0000000';

const [dataDir, token] = process.argv.slice(2);
if (!dataDir || !token) throw new Error('usage: store-batch-once.ts <dataDir> <token>');
const ch = await connectNodeClickHouse({ dataDir });
await migrate(ch.client, { retentionDays: 3650 });

// 40 pageviews of 20 visitors, 6 leaves and 4 custom events in the last hour: every rollup gets rows.
const now = Date.now();
const events = [
  ...Array.from({ length: 40 }, (_, i) => makeEvent({ ts: now - 60_000 * (i + 1), visitor: 1 + (i % 20), path: `/p${i % 5}`, referrerSource: i % 2 ? 'google.com' : '(direct)' })),
  ...Array.from({ length: 6 }, (_, i) => makeEvent({ ts: now - 30_000 * (i + 1), kind: 'leave', visitor: 1 + i, durationMs: 5_000 })),
  ...Array.from({ length: 4 }, (_, i) => makeEvent({ ts: now - 45_000 * (i + 1), kind: 'custom', visitor: 1 + i, eventName: 'signup' })),
];
await insertEvents(ch.rowStore, BATCH_PROJECT, events, { token });

/** What each table holds of the batch: its rows, or the events its rollup counted. */
const counted: Record<string, string> = {
  events: 'count()',
  stats_15m: 'sum(pageviews) + sum(leaves)',
  stats_1d: 'sum(pageviews) + sum(leaves)',
  pages_15m: 'sum(pageviews)',
  pages_1d: 'sum(pageviews)',
  referrers_15m: 'sum(pageviews)',
  referrers_1d: 'sum(pageviews)',
  countries_15m: 'sum(pageviews)',
  countries_1d: 'sum(pageviews)',
  cities_15m: 'sum(pageviews)',
  cities_1d: 'sum(pageviews)',
  tech_15m: 'sum(pageviews)',
  tech_1d: 'sum(pageviews)',
  custom_events_15m: 'sum(events)',
  custom_events_1d: 'sum(events)',
};
const held: Record<string, number> = {};
for (const [table, expression] of Object.entries(counted)) {
  const rs = await ch.client.query({ query: `SELECT ${expression} AS n FROM ${table} WHERE project_id = {p:String}`, query_params: { p: BATCH_PROJECT }, format: 'JSONEachRow' });
  held[table] = Number((await rs.json<{ n: string }>())[0]!.n);
}
console.log(JSON.stringify(held));
await ch.close();
