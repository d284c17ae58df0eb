import type { ClickHouseClient } from '../adapters/clickhouse.js';
import type { EventSink } from './sink.js';

/** Inserts every write at once (tests, tiny installs). The batcher is the production sink. */
export function directSink(ch: ClickHouseClient): EventSink {
  return {
    async write(table, rows) {
      if (rows.length === 0) return;
      await ch.insert({ table, values: rows, format: 'JSONEachRow' });
    },
    async flush() {},
    async close() {},
  };
}
