/** One row of the `events` table as the ingest path writes it (column names as in SQL). */
export type EventRow = Record<string, unknown> & { project_id: string; ts: string; kind: string };
/** One row of the `bot_hits` table. */
export type BotHitRow = Record<string, unknown> & { project_id: string; ts: string; bot_slug: string };

/**
 * Where accepted events go. `write` resolves once the rows are durable (inserted, or held by a
 * buffer that will insert them); `flush` drains; `close` flushes and stops timers.
 */
export interface EventSink {
  write(table: 'events' | 'bot_hits', rows: Record<string, unknown>[]): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
}
