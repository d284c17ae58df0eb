import type { ClickHouseClient } from '../adapters/clickhouse.js';

/**
 * The instant from which vitals events are read from the `vitals` table rather than `events`
 * (migration 0028, README "Vitals apart"), as this process read it. The earliest mark moves only down
 * to 0, once the history below it is copied (moveVitalsHistory), so a mark read earlier stays right (a
 * later migration run adds a later one, which does not count): it is read once; until a mark is
 * stored nothing is kept and the reads name it in a scalar subquery.
 */
export class VitalsMark {
  private known: Promise<number | undefined> | undefined;

  /** The mark, epoch ms (0 on an install that stored no vitals before the table), or undefined when none is stored. */
  since(clickhouse: ClickHouseClient): Promise<number | undefined> {
    this.known ??= read(clickhouse).then((ms) => {
      if (ms === undefined) this.known = undefined;
      return ms;
    }, (error: unknown) => {
      this.known = undefined;
      throw error;
    });
    return this.known;
  }
}

async function read(clickhouse: ClickHouseClient): Promise<number | undefined> {
  const result = await clickhouse.query({ query: 'SELECT count() AS marks, toUnixTimestamp64Milli(min(since)) AS ms FROM vitals_since', format: 'JSONEachRow' });
  const [row] = await result.json<{ marks: string; ms: string }>();
  return row && Number(row.marks) > 0 ? Number(row.ms) : undefined;
}
