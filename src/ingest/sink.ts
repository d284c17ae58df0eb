/**
 * Where accepted events go. `write` resolves once the rows are durable (inserted, or held by a
 * buffer that will insert them); `flush` drains; `close` flushes and stops timers.
 */
export interface EventSink {
  write(table: 'events' | 'bot_hits', rows: Record<string, unknown>[]): Promise<void>;
  flush(): Promise<void>;
  close(): Promise<void>;
}
