import { randomUUID } from 'node:crypto';
import type { RowStore } from '../adapters/row-store.js';
import { toClickHouseDateTime64 } from '../adapters/clickhouse-time.js';
import { afterIo } from '../adapters/event-loop.js';
import { createChunkParser, IMPORT_COLUMNS, importRowColumns, MAX_LINE_CHARS, parseLineBytes, type ParsedLines, type RowColumn } from './import-chunk.js';
import type { ImportParseSession, ImportParserPool } from './import-pool.js';
import { insertLines, RowBuffer } from './insert.js';
import type { Project } from '../projects/store.js';

/** Rows per insert: large blocks are what ClickHouse ingests fastest (200 000 rows: ~1.5× the rate of 50 000). */
export const IMPORT_BATCH_ROWS = 200_000;
/** Parsing goes on while this many blocks are being inserted. */
const MAX_INSERTS_IN_FLIGHT = 2;
/** Errors listed in the answer at most; `rejected` still counts them all. */
export const MAX_LISTED_ERRORS = 100;

export interface ImportResult {
  imported: number;
  rejected: number;
  errors: { line: number; error: string }[];
}

export interface ImportOptions {
  project: Pick<Project, 'id' | 'domain'>;
  /** Caller's id for this import: with it, sending the same file again stores nothing twice. */
  batchId?: string;
  batchRows?: number;
  /** Parses lines off the request thread (Node: worker threads); without it this thread parses. */
  parsers?: ImportParserPool;
  /**
   * Awaited before each chunk is handed to a parser: the import steps aside while viewers' reads are
   * answered (src/http/reads-in-flight.ts), as its inserts do in the engine (InsertOptions.bulk).
   */
  beforeParse?: () => Promise<void>;
}

/**
 * The longest an import waits for reads in flight before it parses its next chunk: the engine's
 * `low_priority_query_wait_time_ms`, so under non-stop reading the import still goes on, as its
 * inserts do.
 */
export const IMPORT_READ_WAIT_MS = 1000;

/** Resolves after pending I/O callbacks have run. */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => afterIo(resolve));

/** Bytes per chunk handed to a parser: large enough that per-chunk costs vanish, small enough to overlap. */
export const CHUNK_BYTES = 1 << 20;
/** Chunks being parsed at once (ahead of the block being assembled). */
const MAX_PARSES_IN_FLIGHT = 4;

/** Stands in for a line too long to keep: the parser refuses it with the usual message. */
const OVERLONG_LINE = Buffer.from(`${'x'.repeat(MAX_LINE_CHARS + 1)}\n`);

/**
 * Cuts a byte stream into chunks of whole lines (at most CHUNK_BYTES each; the body's last line may
 * lack its newline), holding at most one piece of the stream and one partial line. A piece larger
 * than CHUNK_BYTES (a buffered body arrives as one) is cut too, so that the first blocks are
 * inserted while the rest is parsed. A newline byte never occurs inside a multi-byte UTF-8
 * character, so every chunk decodes on its own. A line still open after CHUNK_BYTES is far over
 * the line limit: its bytes are dropped as they come and one over-long stand-in takes its place,
 * so memory stays bounded and the line is still reported by number.
 */
export async function* wholeLineChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  let parts: Uint8Array[] = [];
  let size = 0;
  let skipping = false;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    let bytes = chunk;
    if (skipping) {
      const end = bytes.indexOf(0x0a);
      if (end === -1) continue;
      skipping = false;
      yield OVERLONG_LINE;
      bytes = bytes.subarray(end + 1);
    }
    parts.push(bytes);
    size += bytes.byteLength;
    if (size < CHUNK_BYTES) continue;
    // Starts at a line's start: every cut below and above ends at a newline.
    let joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    while (joined.byteLength >= CHUNK_BYTES) {
      const cut = joined.lastIndexOf(0x0a, CHUNK_BYTES - 1);
      if (cut !== -1) {
        yield joined.subarray(0, cut + 1);
        joined = joined.subarray(cut + 1);
        continue;
      }
      // No line ends within CHUNK_BYTES: the first line is over-long.
      const end = joined.indexOf(0x0a, CHUNK_BYTES);
      if (end === -1) {
        skipping = true;
        joined = joined.subarray(joined.byteLength);
        break;
      }
      yield OVERLONG_LINE;
      joined = joined.subarray(end + 1);
    }
    parts = joined.byteLength > 0 ? [joined] : [];
    size = joined.byteLength;
  }
  if (skipping) yield OVERLONG_LINE;
  else if (size > 0) yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
}

/** Parses chunks in the request thread, for runtimes without a parser pool. */
function inlineSession(project: Pick<Project, 'id' | 'domain'>, columns?: RowColumn[]): ImportParseSession {
  const parse = createChunkParser(project, columns);
  return {
    parse: async (bytes) => {
      const parsed = parseLineBytes(parse, bytes);
      // A buffered body keeps the import in microtasks; let the insert's callbacks run between chunks.
      await yieldToEventLoop();
      return parsed;
    },
    close: () => {},
  };
}

/**
 * Streams an NDJSON body into `events`: one JSON object a line, bad lines reported by 1-based
 * number and skipped, good ones inserted in blocks of `batchRows`. Chunks are parsed ahead (by
 * `parsers` when given, else in this thread) while earlier blocks are inserted. Every block
 * carries the token `{batchId}:{n}` (random without a batch id), so re-sending an import with the
 * same batch id is deduplicated by ClickHouse in the table and its rollups.
 */
export async function importNdjson(store: RowStore, body: ReadableStream<Uint8Array>, opts: ImportOptions): Promise<ImportResult> {
  const batchRows = opts.batchRows ?? IMPORT_BATCH_ROWS;
  const tokenBase = opts.batchId ? `import:${opts.project.id}:${opts.batchId}` : `import:${randomUUID()}`;
  const result: ImportResult = { imported: 0, rejected: 0, errors: [] };
  const columns = await importRowColumns(store);
  const format = columns ? 'RowBinary' : 'JSONEachRow';
  const session = opts.parsers?.open(opts.project, columns) ?? inlineSession(opts.project, columns);
  let block = new RowBuffer(16 << 20);
  /** The latest stamp of the chunks the block's rows come from (a bound: a chunk may span two blocks). */
  let blockLatest = Number.NEGATIVE_INFINITY;
  let blockIndex = 0;
  const inFlight: Promise<void>[] = [];
  // The first blocks are smaller so the engine starts early instead of waiting for a full block.
  let blockRows = Math.min(batchRows, 50_000);

  const send = async () => {
    const rows = block.bytes();
    const latest = blockLatest;
    block = new RowBuffer(rows.byteLength + (rows.byteLength >> 1));
    blockLatest = Number.NEGATIVE_INFINITY;
    blockRows = Math.min(batchRows, blockRows * 2);
    const token = `${tokenBase}:${blockIndex++}`;
    if (inFlight.length >= MAX_INSERTS_IN_FLIGHT) await inFlight.shift();
    const insert = insertWithRetry(store, rows, { token, projectId: opts.project.id, format, latest });
    // Surface a failure at the next wait rather than as an unhandled rejection.
    insert.catch(() => {});
    inFlight.push(insert);
  };

  // Blocks end at exact row counts, whatever the chunks: the same file sent again makes the same
  // blocks, so their dedup tokens match however the body was split on the way.
  let lineNo = 1;
  const take = async (chunk: ParsedLines) => {
    result.rejected += chunk.rejected;
    for (const e of chunk.errors) if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push({ line: e.line + lineNo - 1, error: e.error });
    lineNo += chunk.lines;
    result.imported += chunk.ends.length;
    let row = 0;
    while (row < chunk.ends.length) {
      const n = Math.min(chunk.ends.length - row, blockRows - block.rows);
      const start = row === 0 ? 0 : chunk.ends[row - 1]!;
      block.appendEncoded(chunk.bytes.subarray(start, chunk.ends[row + n - 1]!), n);
      blockLatest = Math.max(blockLatest, chunk.latest);
      row += n;
      if (block.rows >= blockRows) await send();
    }
  };

  const parsing: Promise<ParsedLines>[] = [];
  try {
    for await (const bytes of wholeLineChunks(body)) {
      if (opts.beforeParse) await opts.beforeParse();
      const parsed = session.parse(bytes);
      // Answered in order below; a failure surfaces when its turn comes.
      parsed.catch(() => {});
      parsing.push(parsed);
      if (parsing.length >= MAX_PARSES_IN_FLIGHT) await take(await parsing.shift()!);
    }
    while (parsing.length > 0) await take(await parsing.shift()!);
  } finally {
    session.close();
  }
  if (block.rows > 0) await send();
  for (const insert of inFlight) await insert;
  return result;
}

async function insertWithRetry(
  store: RowStore,
  rows: Uint8Array,
  block: { token: string; projectId: string; format: 'JSONEachRow' | 'RowBinary'; latest: number },
): Promise<void> {
  const { token, projectId, format } = block;
  const latest = Number.isFinite(block.latest) ? toClickHouseDateTime64(block.latest) : undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      // Each row carries its project id rather than the statement: a statement with no bound value
      // runs beside users' reads on the embedded engine (README "Where the computed time goes").
      await insertLines(store, 'events', rows, { token, format, columns: IMPORT_COLUMNS, dateFormat: 'basic', bulk: true, projectIds: [projectId], latest });
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}
