import { insertErrorText } from '../adapters/clickhouse-errors.js';
import type { RowStore } from '../adapters/row-store.js';
import { insertIsolatingRefused, skipSuffix, type IsolationProgress } from './poison.js';
import { logQuarantine, type Quarantine } from './quarantine.js';
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

/**
 * The rows of one table's messages, and the dedup token of any part of them: whole messages go
 * under the digest of their ids (one message: its own id's), a part of one message under that
 * message's token and the row range. A message is acked only once all its rows are placed, so a
 * redelivered message, whatever it is grouped with, meets the tokens it was stored under.
 */
function messageRows(messages: Message[]) {
  // The producer's row builders made the text valid; a message from another deploy (or written
  // before they did) is made valid here, or one bad string would hold its whole batch back.
  const rows = messages.flatMap((m) => m.body.rows.map(validRowText));
  /** starts[i]: the first row of message i; starts[messages.length]: the row count. */
  const starts = [0];
  for (const m of messages) starts.push(starts[starts.length - 1] + m.body.rows.length);
  const messageOf = (row: number) => {
    let i = 0;
    while (starts[i + 1] <= row) i++;
    return i;
  };
  const tokenFor = async (from: number, to: number, skip: readonly number[]) => {
    const first = messageOf(from);
    const last = messageOf(to - 1);
    if (starts[first] === from && starts[last + 1] === to && skip.length === 0) return digest(messages.slice(first, last + 1).map((m) => m.id).sort().join(','));
    if (first !== last) throw new Error(`rows ${from}-${to} cut across messages`);
    const base = starts[first];
    return `${await digest(messages[first].id)}:${from - base}-${to - base}${skipSuffix(skip.map((i) => i - base))}`;
  };
  /** Several messages are cut between messages (at the boundary nearest the middle); one message in the middle. */
  const splitAt = (from: number, to: number) => {
    const first = messageOf(from);
    const last = messageOf(to - 1);
    const middle = from + Math.floor((to - from) / 2);
    if (first === last) return middle;
    let best = starts[first + 1];
    for (let i = first + 1; i <= last; i++) if (Math.abs(starts[i] - middle) < Math.abs(best - middle)) best = starts[i];
    return best;
  };
  const withinOneMessage = (from: number, to: number) => messageOf(from) === messageOf(to - 1);
  return { rows, starts, tokenFor, splitAt, withinOneMessage };
}

/**
 * Queue consumer: one insert per table per batch, each message acked once its rows are in. The
 * dedup token is derived from the message ids, so a redelivered set of messages is not counted
 * twice. Rows ClickHouse refuses for their data are isolated (see insertIsolatingRefused, the
 * same split as the Node batcher's): the other rows are stored, the refused ones go to the
 * quarantine (R2 `quarantine/`) and their messages are acked. On any other error the messages
 * not yet placed are retried by the queue; after `max_retries` it moves them to the dead-letter queue.
 */
export async function consumeEvents(batch: MessageBatch<EventsMessage>, store: RowStore, quarantine: Quarantine = logQuarantine(logError)): Promise<void> {
  const byTable = new Map<EventsMessage['table'], Message[]>();
  for (const m of batch.messages) byTable.set(m.body.table, [...(byTable.get(m.body.table) ?? []), m]);
  for (const [table, messages] of byTable) await consumeTable(store, quarantine, table, messages);
}

async function consumeTable(store: RowStore, quarantine: Quarantine, table: EventsMessage['table'], messages: Message[]): Promise<void> {
  const { rows, starts, tokenFor, splitAt, withinOneMessage } = messageRows(messages);
  const progress: IsolationProgress = { placed: 0, refused: [], inserts: 0 };
  let failure: unknown;
  try {
    await insertIsolatingRefused(
      {
        rows: rows.length,
        insert: (from, to, skip, token) => store.insert(table, rows.slice(from, to).filter((_, i) => !skip.includes(from + i)), { token }),
        tokenFor,
        splitAt,
        setApartNamedRow: withinOneMessage,
        onFailure: async (err) => {
          throw err;
        },
        onSplit: (err) => logError(`[sightline] queue insert into ${table}: ClickHouse refused ${rows.length} rows (${insertErrorText(err, 200)}); splitting them to isolate the refused rows`),
      },
      progress,
    );
  } catch (err) {
    failure = err;
  }
  // Messages whose rows are all placed (a prefix: parts are placed in row order).
  let done = 0;
  while (done < messages.length && starts[done + 1] <= progress.placed) done++;
  const refused = progress.refused.filter((r) => r.index < starts[done]);
  if (refused.length > 0) {
    try {
      await quarantine.put({
        table,
        token: await tokenFor(0, starts[done], []),
        at: new Date(),
        rows: refused.map((r) => ({ line: JSON.stringify(rows[r.index]), error: r.error })),
      });
      logError(`[sightline] queue insert into ${table}: quarantined ${refused.length} of ${starts[done]} rows ClickHouse refused as invalid (in ${quarantine.where})`);
    } catch (err) {
      failure ??= err;
      done = 0;
    }
  }
  if (failure !== undefined) logError(`[sightline] queue insert into ${table} failed (attempt ${messages[0].attempts}): ${insertErrorText(failure)}`);
  messages.forEach((m, i) => (i < done ? m.ack() : m.retry({ delaySeconds: 2 })));
}

/** Dead-lettered batches are kept as JSON in the exports bucket for inspection and replay. */
export async function keepDeadLetters(batch: MessageBatch<EventsMessage>, put: (name: string, body: string) => Promise<void>): Promise<void> {
  const day = new Date().toISOString().slice(0, 10);
  for (const m of batch.messages) {
    await put(`dead-letter/${day}/${m.id}.json`, JSON.stringify({ id: m.id, timestamp: m.timestamp.toISOString(), body: m.body }));
    m.ack();
  }
}
