import { randomUUID } from 'node:crypto';
import type { RowStore } from '../adapters/row-store.js';
import { insertErrorText } from '../adapters/clickhouse-errors.js';
import { closedHoursStamp, earlierStamp, laterStamp } from '../adapters/versioned-row-store.js';
import { deliverBatch, type DeliveryContext } from './deliver-batch.js';
import { RowBuffer, TABLE_COLUMNS, type IngestTable } from './insert.js';
import type { BatchJournal } from './journal.js';
import { logQuarantine, type Quarantine } from './quarantine.js';
import type { EventSink } from './sink.js';
import { logError } from '../log.js';

/** The batcher stopped waiting for ClickHouse (its close deadline passed); what is unsent stays in the journal. */
class GaveUpError extends Error {
  override name = 'GaveUpError';
}

/** `write` refused because the buffer is at its bound (ClickHouse has been down too long). */
export class BufferFullError extends Error {
  override name = 'BufferFullError';
}

export interface BatcherOptions {
  /** A batch is sealed and sent once it holds this many rows (or `maxBatchBytes` of them)… */
  maxBatchRows?: number;
  maxBatchBytes?: number;
  /** …or once its oldest row has waited this long. */
  flushIntervalMs?: number;
  /** Rows held in memory at most (open + waiting batches); beyond it `write` rejects. */
  maxBufferedRows?: number;
  /** Encoded bytes held at most, likewise (rows can be up to the 8 KB an event body allows). */
  maxBufferedBytes?: number;
  /** First retry delay; doubles up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /** Where outage lines go (console.error by default). */
  log?: (line: string) => void;
  /** Keeps acknowledged rows on disk until inserted (Node: fileJournal); without it a crash loses the buffer. */
  journal?: BatchJournal;
  /** Where rows ClickHouse refuses as invalid are kept (Node: fileQuarantine); the log by default. */
  quarantine?: Quarantine;
  /**
   * How long a batch may fail with errors that are neither data nor connection errors before
   * they count as data errors (10 s)…
   */
  unknownErrorGraceMs?: number;
  /**
   * …and how long, from then or from its first data error, isolating its refused rows may take
   * (30 s) before the rows of a part that still fails are quarantined as they are: no batch holds
   * its table's queue longer for its own fault.
   */
  isolationBudgetMs?: number;
  /**
   * `close` stops waiting for ClickHouse after this long (unbounded by default): batches not yet
   * inserted stay in the journal for the next start.
   */
  closeTimeoutMs?: number;
}

interface Batch {
  /** The rows as JSONEachRow lines (UTF-8). */
  body: Uint8Array;
  rows: number;
  /** Fixed when the batch is sealed and reused on every retry, so a retry is never stored twice. */
  token: string;
  /** Taken from the journal of an earlier process. */
  recovered?: boolean;
  /** The projects of its rows (unknown for a batch from the journal). */
  projectIds?: readonly string[];
  /** The earliest `ts` of its rows as stored text (unknown for a batch from the journal). */
  earliest?: string;
  /** The latest `ts` of its rows as stored text (unknown for a batch from the journal). */
  latest?: string;
}

/** Writers waiting for their rows to reach the journal. */
interface JournalWaiters {
  promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

/** One table's buffer: rows not yet in a batch, and sealed batches waiting to be inserted in order. */
class TableQueue {
  constructor(
    private readonly onSeal: (token: string) => void,
    private readonly toJournal?: (bytes: Uint8Array) => void,
  ) {}

  /**
   * Rows not yet in a batch, each encoded to bytes as it arrives: the cost is paid per event,
   * and sealing a batch (nothing left to join or encode) never stalls the event loop.
   */
  open = new RowBuffer();
  /** The projects of the open rows (a superset after a truncate: a data version moved for nothing costs one recomputed answer). */
  openProjects = new Set<string>();
  /**
   * The earliest stamp of the open rows (closedHoursStamp; null once a row has none, as an event
   * without a session floor): a batch of only this hour's rows
   * leaves the closed hours' version alone (versioned-row-store.ts). Like openProjects, an earlier
   * bound after a truncate.
   */
  openEarliest: string | null | undefined = undefined;
  /** The latest `ts` of the open rows (null once a row has none), which carries their projects' latest-row stamps (versioned-row-store.ts). */
  openLatest: string | null | undefined = undefined;
  /** How much of `open` is in the journal. */
  private journaledBytes = 0;
  private journaledRows = 0;
  /** The writers of the rows after that point. */
  private waiters: JournalWaiters | null = null;
  sealed: Batch[] = [];
  draining: Promise<void> | null = null;

  /**
   * Settles once the rows written so far are in the journal (or failed to get there). The first
   * writer after a commit calls `schedule`, which must call commitJournal later (group commit).
   */
  whenJournaled(schedule: () => void): Promise<void> {
    if (!this.waiters) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.waiters = { promise, resolve, reject };
      schedule();
    }
    return this.waiters.promise;
  }

  /**
   * Appends the open rows the journal lacks, in one write. The journal takes all or none: when it
   * fails, those rows leave the batch too and their writers fail, so an event answered with an
   * error is never stored. Returns the rows dropped.
   */
  commitJournal(): number {
    const waiters = this.waiters;
    this.waiters = null;
    if (this.toJournal && this.journaledBytes < this.open.byteLength) {
      try {
        this.toJournal(this.open.bytes().subarray(this.journaledBytes));
      } catch (err) {
        const dropped = this.open.rows - this.journaledRows;
        this.open.truncate(this.journaledBytes, this.journaledRows);
        waiters?.reject(err);
        return dropped;
      }
      this.journaledBytes = this.open.byteLength;
      this.journaledRows = this.open.rows;
    }
    waiters?.resolve();
    return 0;
  }

  /** Seals the open rows into a batch; call commitJournal first, so the batch leaves the journal's open file whole. */
  seal(): void {
    if (this.open.rows === 0) return;
    const token = randomUUID();
    this.onSeal(token);
    this.sealed.push({
      body: this.open.bytes(),
      rows: this.open.rows,
      token,
      projectIds: [...this.openProjects],
      ...(this.openEarliest ? { earliest: this.openEarliest } : {}),
      ...(this.openLatest ? { latest: this.openLatest } : {}),
    });
    this.open = new RowBuffer();
    this.openProjects = new Set();
    this.openEarliest = this.openLatest = undefined;
    this.journaledBytes = 0;
    this.journaledRows = 0;
  }
}

/**
 * The Node event sink: buffers rows per table in memory and inserts them in batches (by count,
 * by time, and on flush/close). A batch that fails for a connection error is retried with
 * backoff under the same `insert_deduplication_token`, so ClickHouse stores it exactly once; while
 * ClickHouse is down the buffer holds up to `maxBufferedRows` rows and `maxBufferedBytes` bytes
 * (then `write` rejects with BufferFullError, which the routes answer 503) and drains when it
 * returns. From a batch ClickHouse refuses for its data, the refused rows are set apart: the rest
 * is stored, they go to the `quarantine` (see deliverBatch). Each table drains on its own.
 *
 * Durability: with a `journal`, `write` resolves once rows are in the journal too (the writes of
 * one event-loop turn share one journal write) and rejects, its rows dropped, when the journal
 * refuses them; a batch leaves the journal only when ClickHouse has it; a new batcher on the
 * same journal first inserts what an earlier process left (under the same tokens, so nothing is
 * stored twice), reading it batch by batch as room frees up. Without one, a crash (not a clean
 * SIGTERM/SIGINT, which flushes) loses what is buffered. `close` gives up after `closeTimeoutMs`,
 * leaving what is unsent in the journal.
 */
export function createBatcher(
  store: RowStore,
  opts: BatcherOptions = {},
): EventSink & { buffered(): number; bufferedBytes(): number; quarantined(): number } {
  // Rows are encoded as they arrive, so a large batch costs no event-loop stall; fewer, larger
  // inserts leave the engine fewer parts to write and merge (16 a batch with the rollups), and
  // each insert costs ~10 ms of engine CPU per view whatever its size. The count bound is high
  // enough that up to 10 000 events/s are still sealed by time.
  const maxBatchRows = opts.maxBatchRows ?? 50_000;
  const flushIntervalMs = opts.flushIntervalMs ?? 5000;
  const maxBuffered = opts.maxBufferedRows ?? 1_000_000;
  // 256 MB: a few minutes of a busy site's events, a small share of the host's memory.
  const maxBufferedBytes = opts.maxBufferedBytes ?? 256 * 1024 * 1024;
  // Also bounds each journal file, which a restart reads whole.
  const maxBatchBytes = opts.maxBatchBytes ?? 32 * 1024 * 1024;
  const baseDelay = opts.retryDelayMs ?? 200;
  const maxDelay = opts.maxRetryDelayMs ?? 5000;
  const log = opts.log ?? ((line: string) => logError(line));

  const journal = opts.journal;
  const queueOf = (table: IngestTable) =>
    new TableQueue(
      (token) => journal?.seal(table, token),
      journal && ((bytes) => journal.append(table, bytes)),
    );
  const queues: Record<IngestTable, TableQueue> = { events: queueOf('events'), bot_hits: queueOf('bot_hits') };
  let buffered = 0;
  let bufferedBytes = 0;
  // What an earlier process left is read batch by batch as the buffer drains (while it is under
  // half its byte bound, and always one batch), so a backlog of any size starts in bounded memory.
  const backlog = journal?.recover() ?? [];
  let backlogNext = 0;
  let backlogHeld = 0;
  if (backlog.length > 0) log(`[sightline] ingest: rows an earlier process left in the journal are being inserted (${backlog.length} ${backlog.length === 1 ? 'batch' : 'batches'})`);
  let failingSince = 0;
  let closed = false;

  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  // Giving up (close's deadline) ends every wait for ClickHouse at once; the inserts in flight are
  // left to finish or not, and a replay dedupes whatever they stored.
  let gaveUp = false;
  let giveUp!: () => void;
  const givenUp = new Promise<never>((_, reject) => {
    giveUp = () => {
      gaveUp = true;
      reject(new GaveUpError('gave up waiting for ClickHouse'));
    };
  });
  givenUp.catch(() => {});
  const abortable = <T>(work: Promise<T>): Promise<T> => Promise.race([work, givenUp]);
  const quarantine = opts.quarantine ?? logQuarantine(log);
  let quarantined = 0;

  const delivery: DeliveryContext = {
    store,
    quarantine,
    log,
    sleep: (ms) => abortable(sleep(ms)),
    abortable,
    retryDelay: (attempt) => Math.min(baseDelay * 2 ** Math.min(attempt - 1, 30), maxDelay),
    unknownErrorGraceMs: opts.unknownErrorGraceMs ?? 10_000,
    isolationBudgetMs: opts.isolationBudgetMs ?? 30_000,
    now: () => Date.now(),
    onRetry(table, err, kind, attempt) {
      if (!failingSince) failingSince = Date.now();
      // One line per doubling keeps an outage visible without flooding the log.
      if ((attempt & (attempt - 1)) === 0) {
        log(`[sightline] ingest: ClickHouse insert into ${table} failed (attempt ${attempt}, ${kind} error, ${buffered} rows buffered of ${maxBuffered}); retrying: ${insertErrorText(err, 300)}`);
      }
    },
    onInserted() {
      if (failingSince) {
        log(`[sightline] ingest: ClickHouse inserts recovered after ${Math.round((Date.now() - failingSince) / 1000)} s; draining ${buffered} buffered rows`);
        failingSince = 0;
      }
    },
  };

  function takeBacklog(): void {
    while (!gaveUp && backlogNext < backlog.length && (backlogHeld === 0 || bufferedBytes < maxBufferedBytes / 2)) {
      const { table, token, load } = backlog[backlogNext++]!;
      const rows = load();
      if (!rows) continue;
      queues[table].sealed.push({ ...rows, token, recovered: true });
      buffered += rows.rows;
      bufferedBytes += rows.body.byteLength;
      backlogHeld++;
      void drain(table);
    }
  }

  function drain(table: IngestTable): Promise<void> {
    const q = queues[table];
    q.draining ??= (async () => {
      while (q.sealed.length > 0 && !gaveUp) {
        const batch = q.sealed[0];
        let refused: number;
        try {
          refused = await deliverBatch(delivery, table, batch);
        } catch (err) {
          // Given up: the batch stays sealed in the journal.
          if (err instanceof GaveUpError) return;
          throw err;
        }
        if (refused > 0) {
          quarantined += refused;
          log(`[sightline] ingest: quarantined ${refused} of ${batch.rows} rows of a batch into ${table} that ClickHouse refused as invalid (in ${quarantine.where}; ${quarantined} since start)`);
        }
        journal?.done(table, batch.token);
        q.sealed.shift();
        buffered -= batch.rows;
        bufferedBytes -= batch.body.byteLength;
        if (batch.recovered) {
          backlogHeld--;
          takeBacklog();
        }
      }
    })().finally(() => {
      q.draining = null;
    });
    return q.draining;
  }

  /** Group commit: the rows a table got in one turn of the event loop reach the journal in one write. */
  function commitJournal(q: TableQueue): void {
    const bytes = q.open.byteLength;
    buffered -= q.commitJournal();
    bufferedBytes -= bytes - q.open.byteLength;
  }

  function seal(q: TableQueue): void {
    commitJournal(q);
    q.seal();
  }

  function sealAll(): void {
    for (const table of Object.keys(queues) as IngestTable[]) {
      seal(queues[table]);
      if (queues[table].sealed.length > 0) void drain(table);
    }
  }

  const timer = setInterval(sealAll, flushIntervalMs);
  timer.unref?.();
  // What the journal gave back goes in now, not at the first tick.
  takeBacklog();

  /**
   * Everything written before the call is in ClickHouse (or given up on) when it resolves, and so
   * is the journal's backlog. Rows written while it waits go in later batches: under a steady
   * stream of events whose inserts take longer than the gap between two events, waiting for
   * those too would never end.
   */
  async function flush(): Promise<void> {
    sealAll();
    const lastSealed = Object.fromEntries((Object.keys(queues) as IngestTable[]).map((t) => [t, queues[t].sealed.at(-1)]));
    for (;;) {
      takeBacklog();
      let idle = true;
      for (const table of Object.keys(queues) as IngestTable[]) {
        const q = queues[table];
        const last = lastSealed[table];
        while (!gaveUp && ((last && q.sealed.includes(last)) || q.sealed.some((b) => b.recovered))) {
          idle = false;
          await drain(table);
        }
      }
      if (gaveUp || (idle && backlogNext >= backlog.length)) return;
    }
  }

  /** flush, and again until nothing is left: rows written meanwhile too (close; writes stop with it). */
  async function flushAll(): Promise<void> {
    for (;;) {
      await flush();
      const left = (Object.keys(queues) as IngestTable[]).some((t) => queues[t].draining || queues[t].sealed.length > 0 || queues[t].open.rows > 0);
      if (gaveUp || !left) return;
    }
  }

  return {
    async write(table, rows) {
      if (rows.length === 0) return;
      if (closed) throw new Error('event sink is closed');
      if (!(table in TABLE_COLUMNS)) throw new Error(`unknown ingest table ${table}`);
      const full = () => {
        log(`[sightline] ingest: buffer full (${buffered} rows, ${bufferedBytes} bytes waiting for ClickHouse); refusing ${rows.length} rows`);
        return new BufferFullError('event buffer is full');
      };
      if (buffered + rows.length > maxBuffered) throw full();
      const q = queues[table];
      const [bytesBefore, rowsBefore] = [q.open.byteLength, q.open.rows];
      for (const row of rows) {
        q.open.append(row);
        if (typeof row.project_id === 'string') q.openProjects.add(row.project_id);
        q.openEarliest = earlierStamp(q.openEarliest, closedHoursStamp(table, row));
        q.openLatest = laterStamp(q.openLatest, row.ts);
      }
      const added = q.open.byteLength - bytesBefore;
      if (bufferedBytes + added > maxBufferedBytes) {
        // These rows are not journaled yet (that happens later in this turn): taking them back is local.
        q.open.truncate(bytesBefore, rowsBefore);
        throw full();
      }
      buffered += rows.length;
      bufferedBytes += added;
      // Each write resolves only once its rows are in the journal (a write per event was ~3% of
      // the event path; one per turn is what the batch needs).
      const written = journal ? q.whenJournaled(() => setImmediate(() => commitJournal(q))) : undefined;
      if (q.open.rows >= maxBatchRows || q.open.byteLength >= maxBatchBytes) {
        seal(q);
        void drain(table);
      }
      await written;
    },
    flush,
    async close() {
      clearInterval(timer);
      const deadline = opts.closeTimeoutMs === undefined ? undefined : setTimeout(giveUp, opts.closeTimeoutMs);
      try {
        await flushAll();
      } finally {
        clearTimeout(deadline);
        closed = true;
      }
      if (gaveUp) {
        // The open rows were sealed (and journaled) by flush; everything unsent is in the journal.
        log(`[sightline] ingest: stopped waiting for ClickHouse after ${opts.closeTimeoutMs} ms; ${buffered} rows stay ${journal ? 'in the journal for the next start' : 'unsent (no journal)'}`);
      }
    },
    buffered: () => buffered,
    bufferedBytes: () => bufferedBytes,
    quarantined: () => quarantined,
  };
}
