import type { RowStore } from '../adapters/row-store.js';
import { insertErrorText, type InsertErrorKind } from '../adapters/clickhouse-errors.js';
import { insertLines, type IngestTable } from './insert.js';
import { insertIsolatingRefused, partToken } from './poison.js';
import type { Quarantine } from './quarantine.js';

/** A sealed batch: JSONEachRow lines and the token it was sealed under. */
export interface DeliverableBatch {
  body: Uint8Array;
  rows: number;
  token: string;
  /** The projects of its rows, when known (see EncodedRows.projectIds). */
  projectIds?: readonly string[];
  /** The earliest `ts` of its rows, when known (see EncodedRows.earliest). */
  earliest?: string;
  /** The latest `ts` of its rows, when known (see EncodedRows.latest). */
  latest?: string;
}

export interface DeliveryContext {
  store: RowStore;
  quarantine: Quarantine;
  log(line: string): void;
  /** Waits before a retry; rejects once the batcher gives up (shutdown deadline). */
  sleep(ms: number): Promise<void>;
  /** Stops waiting for `work` once the batcher gives up. */
  abortable<T>(work: Promise<T>): Promise<T>;
  /** Delay before the `attempt`-th retry of the same rows. */
  retryDelay(attempt: number): number;
  /** How long a batch may fail with errors that are neither data nor connection errors before they count as data errors. */
  unknownErrorGraceMs: number;
  /**
   * How long isolating a batch's refused rows may take, from its first error that is not a
   * connection error; past it, the rows of a part that fails are quarantined as they are.
   */
  isolationBudgetMs: number;
  now(): number;
  /** Every failed insert that is retried (the batcher logs outages). */
  onRetry(table: IngestTable, err: unknown, kind: Exclude<InsertErrorKind, 'data'>, attempt: number): void;
  /** Every insert that succeeded. */
  onInserted(): void;
}

/** Byte offset of each row's start, and of the end: row i is body[starts[i], starts[i + 1]). */
function lineStarts(body: Uint8Array, rows: number): Uint32Array {
  const starts = new Uint32Array(rows + 1);
  let row = 1;
  for (let i = 0; i < body.byteLength && row <= rows; i++) if (body[i] === 0x0a) starts[row++] = i + 1;
  return starts;
}

/**
 * Inserts a batch, whatever ClickHouse says, and answers how many rows went to the quarantine:
 * - connection errors (transient) are retried with backoff for as long as they last;
 * - data errors set the refused rows apart (see insertIsolatingRefused):
 *   the rest is stored, the refused rows go to the quarantine with their error;
 * - other errors are retried for `unknownErrorGraceMs` from the batch's first one; after that,
 *   if ClickHouse still answers a ping they are taken as data errors (the batch is what it
 *   refuses), otherwise as an outage;
 * - isolation has a budget (`isolationBudgetMs` from the batch's first error that is not a
 *   connection error, outages during it not counted): past it, the rows of a part that still
 *   fails go to the quarantine as they are, so no batch holds its table's queue for long,
 *   whatever it holds.
 * Rejects only when the batcher gives up (shutdown): the batch stays in the journal, and a
 * replay splits it the same way under the same tokens, so the parts already stored are dropped.
 */
export async function deliverBatch(ctx: DeliveryContext, table: IngestTable, batch: DeliverableBatch): Promise<number> {
  let starts: Uint32Array | undefined;
  const rowsOf = (from: number, to: number, skip: readonly number[] = []): Uint8Array => {
    starts ??= lineStarts(batch.body, batch.rows);
    if (skip.length === 0) return batch.body.subarray(starts[from], starts[to]);
    const pieces: Uint8Array[] = [];
    let at = from;
    for (const index of [...skip, to]) {
      if (index > at) pieces.push(batch.body.subarray(starts[at], starts[index]));
      at = index + 1;
    }
    return Buffer.concat(pieces);
  };
  /** When the batch first failed for something other than a connection error… */
  let troubleSince = 0;
  /** …and how much of the time since went to an outage (failed attempts and waits), which the isolation budget does not count. */
  let outageMs = 0;
  let attemptStarted = 0;
  const waitAndRetry = async (err: unknown, kind: Exclude<InsertErrorKind, 'data'>, attempt: number) => {
    ctx.onRetry(table, err, kind, attempt);
    await ctx.sleep(ctx.retryDelay(attempt));
    if (kind === 'transient' && troubleSince) outageMs += ctx.now() - attemptStarted;
    return 'retry' as const;
  };
  const progress = await insertIsolatingRefused({
    rows: batch.rows,
    tokenFor: (from, to, skip) => partToken(batch.token, batch.rows, from, to, skip),
    insert: async (from, to, skip, token) => {
      attemptStarted = ctx.now();
      await ctx.abortable(insertLines(ctx.store, table, from === 0 && to === batch.rows && skip.length === 0 ? batch.body : rowsOf(from, to, skip), { token, projectIds: batch.projectIds, earliest: batch.earliest, latest: batch.latest }));
      ctx.onInserted();
    },
    async onFailure(err, kind, attempt) {
      if (kind === 'transient') return waitAndRetry(err, kind, attempt);
      troubleSince ||= ctx.now();
      if (ctx.now() - troubleSince < ctx.unknownErrorGraceMs) return waitAndRetry(err, kind, attempt);
      // Past the grace: split only if ClickHouse is up, so an outage that answers oddly never
      // sends good rows to the quarantine.
      const up = await ctx.abortable(ctx.store.ping()).catch(() => false);
      return up ? 'split' : waitAndRetry(err, 'transient', attempt);
    },
    outOfTime: () => ctx.now() - troubleSince - outageMs >= ctx.isolationBudgetMs,
    onSplit(err) {
      troubleSince ||= ctx.now();
      ctx.log(`[sightline] ingest: ClickHouse refused a batch of ${batch.rows} rows into ${table} (${insertErrorText(err, 200)}); splitting it to isolate the refused rows`);
    },
  });
  if (progress.refused.length === 0) return 0;
  const record = { table, token: batch.token, at: new Date(ctx.now()), rows: progress.refused.map(({ index, error }) => ({ line: new TextDecoder().decode(rowsOf(index, index + 1)).replace(/\n$/, ''), error })) };
  // The batch leaves the journal only once its refused rows are safe: keep trying.
  for (let attempt = 1; ; attempt++) {
    try {
      await ctx.quarantine.put(record);
      break;
    } catch (err) {
      ctx.log(`[sightline] ingest: could not write to the quarantine in ${ctx.quarantine.where} (attempt ${attempt}): ${insertErrorText(err, 200)}`);
      await ctx.sleep(ctx.retryDelay(attempt));
    }
  }
  return progress.refused.length;
}
