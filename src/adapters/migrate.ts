import { readdir, readFile } from 'node:fs/promises';
import type { ClickHouseClient } from './clickhouse.js';
import { ANALYTICS_TABLES } from '../analytics-tables.js';

const MIGRATIONS_DIR = new URL('../../sql/migrations/', import.meta.url);
const RETENTION_SQL = new URL('../../sql/retention.sql', import.meta.url);

/** Splits a migration file into statements: `;` at the end of a line ends one. */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
}

/** Reads sql/migrations in order: `[{ name, statements }]`. */
export async function loadMigrations(): Promise<{ name: string; statements: string[] }[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (name) => ({ name, statements: splitStatements(await readFile(new URL(name, MIGRATIONS_DIR), 'utf8')) })),
  );
}

const MODIFY_QUERY = /^ALTER\s+TABLE\s+(\w+)\s+MODIFY\s+QUERY\b/i;

/** The materialized views whose query `statements` change (`ALTER TABLE <view> MODIFY QUERY`). */
export function viewsModifiedBy(statements: readonly string[]): string[] {
  return statements.flatMap((statement) => {
    const view = MODIFY_QUERY.exec(statement)?.[1];
    return view ? [view] : [];
  });
}

/**
 * Applies every migration not yet recorded, in order, then sets retention TTLs. Safe to run at
 * every start and from several processes: statements are idempotent (`IF NOT EXISTS`).
 *
 * A view whose query a migration changes is detached and attached again at once, so that this
 * process holds it as every later start does, from its stored definition. Held as the `ALTER`
 * left it, it gave the rows it wrote other deduplication ids than a later process gives the
 * same rows: a batch stored by the migrating process and retried by the next one under the same
 * token (a journal replay after a crash, an import sent again) was stored twice in that view's
 * table (README "Guarantees and limits").
 */
export async function migrate(ch: ClickHouseClient, opts: { retentionDays: number }): Promise<string[]> {
  await ch.command({
    query: `CREATE TABLE IF NOT EXISTS schema_migrations (name String, applied_at DateTime DEFAULT now())
            ENGINE = ReplacingMergeTree ORDER BY name`,
  });
  const done = new Set(
    (await (await ch.query({ query: 'SELECT name FROM schema_migrations', format: 'JSONEachRow' })).json<{ name: string }>()).map(
      (r) => r.name,
    ),
  );
  const applied: string[] = [];
  for (const m of await loadMigrations()) {
    if (done.has(m.name)) continue;
    for (const statement of m.statements) await ch.command({ query: statement });
    for (const view of viewsModifiedBy(m.statements)) {
      await ch.command({ query: 'DETACH TABLE {view:Identifier}', query_params: { view } });
      await ch.command({ query: 'ATTACH TABLE {view:Identifier}', query_params: { view } });
    }
    await ch.insert({ table: 'schema_migrations', values: [{ name: m.name }], format: 'JSONEachRow' });
    applied.push(m.name);
  }
  await applyRetention(ch, opts.retentionDays);
  return applied;
}

/**
 * Sets each table's TTL to the configured retention, but only where it differs: MODIFY TTL
 * recomputes TTL for every stored part, which is not work to repeat at every start.
 */
async function applyRetention(ch: ClickHouseClient, days: number): Promise<void> {
  if (!Number.isInteger(days) || days < 1) throw new Error('retention days must be a positive integer');
  const template = splitStatements(await readFile(RETENTION_SQL, 'utf8'))[0];
  const current = new Map(
    (
      await (
        await ch.query({
          query: "SELECT name, extract(create_table_query, 'TTL (.*?)(?: SETTINGS|$)') AS ttl FROM system.tables WHERE database = currentDatabase()",
          format: 'JSONEachRow',
        })
      ).json<{ name: string; ttl: string }>()
    ).map((r) => [r.name, r.ttl]),
  );
  for (const t of ANALYTICS_TABLES) {
    const timeExpression = t.timeColumn === 'ts' ? 'toDateTime(ts)' : t.timeColumn;
    const kept = 'keepDays' in t ? Math.min(days, t.keepDays) : days;
    // ClickHouse shows `+ INTERVAL n DAY` back as `+ toIntervalDay(n)`.
    if (current.get(t.name) === timeExpression + ' + toIntervalDay(' + kept + ')') continue;
    const statement = template.replace('{table}', t.name).replace('{time_column}', timeExpression).replace('{days}', String(kept));
    await ch.command({ query: statement });
  }
}
