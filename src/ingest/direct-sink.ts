import type { RowStore } from '../adapters/row-store.js';
import type { EventSink } from './sink.js';

/** Inserts every write at once (tests, tiny installs). The batcher is the production sink. */
export function directSink(store: RowStore): EventSink {
  return {
    async write(table, rows) {
      if (rows.length === 0) return;
      await store.insert(table, rows);
    },
    async flush() {},
    async close() {},
  };
}
