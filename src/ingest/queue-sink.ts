import type { ClickHouseClient } from '../adapters/clickhouse.js';
import type { EventSink } from './sink.js';
import { validRowText } from './valid-text.js';
import { logError } from '../log.js';

/** One queue message: rows for one table. Kept well under the 128 KB message limit. */
export interface EventsMessage {
  table: 'events' | 'bot_hits';
  rows: Record<string, unknown>[];
}

const MAX_MESSAGE_BYTES = 100_000;
const MAX_BATCH_MESSAGES = 100;

/**
 * Workers sink: `write` resolves only after the rows are durably enqueued, so an event is never
 * acknowledged before it is safe. The queue consumer does the batching into ClickHouse.
 */
export function queueSink(queue: Queue<EventsMessage>): EventSink {
  return {
    async write(table, rows) {
      const messages: { body: EventsMessage }[] = [];
      let current: Record<string, unknown>[] = [];
      let size = 0;
      for (const row of rows) {
        const bytes = JSON.stringify(row).length;
        if (current.length > 0 && size + bytes > MAX_MESSAGE_BYTES) {
          messages.push({ body: { table, rows: current } });
          current = [];
          size = 0;
        }
        current.push(row);
        size += bytes;
      }
      if (current.length > 0) messages.push({ body: { table, rows: current } });
      for (let i = 0; i < messages.length; i += MAX_BATCH_MESSAGES) await queue.sendBatch(messages.slice(i, i + MAX_BATCH_MESSAGES));
    },
    async flush() {},
    async close() {},
  };
}

async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return [...bytes.slice(0, 16)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

type Message = MessageBatch<EventsMessage>['messages'][number];

async function insertRows(clickhouse: ClickHouseClient, table: EventsMessage['table'], messages: Message[]): Promise<void> {
  await clickhouse.insert({
    table,
    // The producer's row builders made the text valid; a message from another deploy (or written
    // before they did) is made valid here, or one bad string would hold its whole batch back.
    values: messages.flatMap((m) => m.body.rows.map(validRowText)),
    format: 'JSONEachRow',
    clickhouse_settings: {
      insert_deduplicate: 1,
      deduplicate_blocks_in_dependent_materialized_views: 1,
      insert_deduplication_token: await digest(messages.map((m) => m.id).sort().join(',')),
    },
  });
}

/** The server answered with an exception (bad data, unknown table): nothing was inserted. */
const rejectedByServer = (err: unknown) => /^\d+$/.test(String((err as { code?: unknown }).code ?? ''));

/**
 * Queue consumer: one insert per table per batch, each message acked once its rows are in. The
 * dedup token is derived from the message ids, so a redelivered set of messages is not counted
 * twice. When ClickHouse rejects a batch, its messages are tried one by one so a single bad
 * message cannot hold the others back; what still fails is retried, and after `max_retries` the
 * queue moves it to the dead-letter queue.
 */
export async function consumeEvents(batch: MessageBatch<EventsMessage>, clickhouse: ClickHouseClient): Promise<void> {
  const byTable = new Map<EventsMessage['table'], Message[]>();
  for (const m of batch.messages) byTable.set(m.body.table, [...(byTable.get(m.body.table) ?? []), m]);
  for (const [table, messages] of byTable) {
    try {
      await insertRows(clickhouse, table, messages);
      for (const m of messages) m.ack();
    } catch (err) {
      const single = messages.length > 1 && rejectedByServer(err);
      logError(`[sightline] queue insert into ${table} failed (attempt ${messages[0].attempts})`, err);
      for (const m of messages) {
        try {
          if (!single) throw err;
          await insertRows(clickhouse, table, [m]);
          m.ack();
        } catch {
          m.retry({ delaySeconds: 2 });
        }
      }
    }
  }
}

/** Dead-lettered batches are kept as JSON in the exports bucket for inspection and replay. */
export async function keepDeadLetters(batch: MessageBatch<EventsMessage>, put: (name: string, body: string) => Promise<void>): Promise<void> {
  const day = new Date().toISOString().slice(0, 10);
  for (const m of batch.messages) {
    await put(`dead-letter/${day}/${m.id}.json`, JSON.stringify({ id: m.id, timestamp: m.timestamp.toISOString(), body: m.body }));
    m.ack();
  }
}
