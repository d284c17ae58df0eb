import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '../adapters/clickhouse.js';
import { createChunkParser, importRowEncoder, type ParsedChunk } from './import-chunk.js';
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
}

/** Resolves after pending I/O callbacks have run (setImmediate on Node, a timer elsewhere). */
const yieldToEventLoop = (): Promise<void> =>
  new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));

/**
 * Splits a byte stream into text lines without holding more than one chunk and one partial line.
 * Yields the lines of each chunk together: one await per chunk, not per line.
 */
async function* lineBatches(body: ReadableStream<Uint8Array>): AsyncGenerator<string[]> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const text = rest + decoder.decode(chunk, { stream: true });
    const batch: string[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      batch.push(text.slice(start, nl));
      start = nl + 1;
    }
    rest = text.slice(start);
    if (batch.length > 0) yield batch;
  }
  rest += decoder.decode();
  if (rest.length > 0) yield [rest];
}

/**
 * Streams an NDJSON body into `events`: one JSON object a line, bad lines reported by 1-based
 * number and skipped, good ones inserted in blocks of `batchRows`. Parsing the next block overlaps
 * the insert of the previous one. Every block carries the token `{batchId}:{n}` (random without a
 * batch id), so re-sending an import with the same batch id is deduplicated by ClickHouse in the
 * table and its rollups.
 */
export async function importNdjson(ch: ClickHouseClient, body: ReadableStream<Uint8Array>, opts: ImportOptions): Promise<ImportResult> {
  const batchRows = opts.batchRows ?? IMPORT_BATCH_ROWS;
  const tokenBase = opts.batchId ? `import:${opts.project.id}:${opts.batchId}` : `import:${randomUUID()}`;
  const result: ImportResult = { imported: 0, rejected: 0, errors: [] };
  const encodeRow = await importRowEncoder(ch);
  const format = encodeRow ? 'RowBinary' : 'JSONEachRow';
  const parseChunk = createChunkParser(opts.project, encodeRow);
  let block = new RowBuffer(16 << 20);
  let blockIndex = 0;
  const inFlight: Promise<void>[] = [];
  // The first blocks are smaller so the engine starts early instead of waiting for a full block.
  let blockRows = Math.min(batchRows, 50_000);

  const send = async () => {
    const rows = block.bytes();
    block = new RowBuffer(rows.byteLength + (rows.byteLength >> 1));
    blockRows = Math.min(batchRows, blockRows * 2);
    const token = `${tokenBase}:${blockIndex++}`;
    if (inFlight.length >= MAX_INSERTS_IN_FLIGHT) await inFlight.shift();
    const insert = insertWithRetry(ch, rows, token, opts.project.id, format);
    // Surface a failure at the next wait rather than as an unhandled rejection.
    insert.catch(() => {});
    inFlight.push(insert);
  };

  // Blocks end at exact row counts, whatever the chunks: the same file sent again makes the same
  // blocks, so their dedup tokens match however the body was split on the way.
  const take = async (chunk: ParsedChunk) => {
    result.rejected += chunk.rejected;
    for (const e of chunk.errors) if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push(e);
    result.imported += chunk.ends.length;
    let row = 0;
    while (row < chunk.ends.length) {
      const n = Math.min(chunk.ends.length - row, blockRows - block.rows);
      const start = row === 0 ? 0 : chunk.ends[row - 1]!;
      block.appendEncoded(chunk.bytes.subarray(start, chunk.ends[row + n - 1]!), n);
      row += n;
      if (block.rows >= blockRows) await send();
    }
  };

  let lineNo = 1;
  for await (const lines of lineBatches(body)) {
    await take(parseChunk(lines, lineNo));
    lineNo += lines.length;
    // A buffered body keeps this loop in microtasks; let the insert's callbacks run between chunks.
    await yieldToEventLoop();
  }
  if (block.rows > 0) await send();
  for (const insert of inFlight) await insert;
  return result;
}

async function insertWithRetry(ch: ClickHouseClient, rows: Uint8Array, token: string, projectId: string, format: 'JSONEachRow' | 'RowBinary'): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      // The rows leave out project_id (see createChunkParser); the insert supplies it.
      await insertLines(ch, 'events', rows, { token, format, dateFormat: 'basic', parallelViews: true, constants: { project_id: projectId } });
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}
