import type { Redis } from '@upstash/redis';
import { ProjectKeys } from '../projects/store.js';
import type { EventsMessage } from './queue-sink.js';
import { logError, logInfo } from '../log.js';

type Message = MessageBatch<EventsMessage>['messages'][number];

/** The same message with fewer rows; acks and retries still go to the queue's message. */
const withRows = (m: Message, rows: EventsMessage['rows']): Message => ({
  id: m.id,
  timestamp: m.timestamp,
  attempts: m.attempts,
  body: { ...m.body, rows },
  ack: () => m.ack(),
  retry: (options) => m.retry(options),
});

/**
 * Drops the queued rows of projects deleted since their events were accepted (a queue holds
 * messages for seconds, and up to days on retries): a message left with no rows is acked, one
 * with some left goes on with those. Its id is unchanged, so the insert's dedup token is too.
 *
 * When Redis cannot answer, the batch goes on unfiltered: storing a few rows of a deleted
 * project (unreachable, and expired by retention) beats losing accepted events of live ones.
 */
export async function dropDeletedProjects(batch: MessageBatch<EventsMessage>, redis: Redis): Promise<MessageBatch<EventsMessage>> {
  const ids = [...new Set(batch.messages.flatMap((m) => m.body.rows.map((r) => String(r.project_id ?? ''))))];
  if (ids.length === 0) return batch;
  let live: Set<string>;
  try {
    const pipe = redis.pipeline();
    for (const id of ids) pipe.exists(ProjectKeys.project(id));
    const found = await pipe.exec<number[]>();
    live = new Set(ids.filter((_, i) => Number(found[i]) > 0));
  } catch (err) {
    logError(`[sightline] queue: could not check projects, inserting unfiltered: ${(err as Error).message}`);
    return batch;
  }
  if (live.size === ids.length) return batch;
  const messages: Message[] = [];
  let dropped = 0;
  for (const m of batch.messages) {
    const rows = m.body.rows.filter((r) => live.has(String(r.project_id ?? '')));
    dropped += m.body.rows.length - rows.length;
    if (rows.length === m.body.rows.length) messages.push(m);
    else if (rows.length === 0) m.ack();
    else messages.push(withRows(m, rows));
  }
  logInfo(`[sightline] queue: dropped ${dropped} row(s) of deleted projects`);
  return {
    queue: batch.queue,
    messages,
    ackAll: () => messages.forEach((m) => m.ack()),
    retryAll: (options) => messages.forEach((m) => m.retry(options)),
  };
}
