import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import type { ClickHouseClient } from '../adapters/clickhouse.js';
import { hashToUInt64 } from './enrich/visitor.js';
import { memoizeBounded } from './enrich/memo.js';
import { firstIssue, ImportLine, parseHttpUrl, type ImportInput } from './event-schema.js';
import { acceptImportLine } from './import-fast.js';
import { insertLines, RowBuffer } from './insert.js';
import { eventRow } from './pipeline.js';
import type { Project } from '../projects/store.js';

/** Rows per insert: large blocks are what ClickHouse ingests fastest (200 000 rows: ~1.5× the rate of 50 000). */
export const IMPORT_BATCH_ROWS = 200_000;
/** Parsing goes on while this many blocks are being inserted. */
const MAX_INSERTS_IN_FLIGHT = 2;
/** Errors listed in the answer at most; `rejected` still counts them all. */
export const MAX_LISTED_ERRORS = 100;
/** A line longer than this is refused without being parsed (the tracker's own limit is 8 KB). */
const MAX_LINE_CHARS = 64 * 1024;

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

/** The `events` row of one import line: explicit time, identity and dimensions, no enrichment. */
export function importRow(
  project: Pick<Project, 'id' | 'domain'>,
  line: ImportInput,
  url = new URL(line.url),
  ids: (s: string) => string = hashToUInt64,
  at = Date.parse(line.timestamp),
): Record<string, unknown> {
  // A fixed-shape literal rather than a spread of the parsed line: cheaper a million times over.
  const fields = {
    kind: line.kind,
    url,
    referrer: line.referrer,
    name: line.name,
    props: line.props,
    amountCents: line.amountCents,
    currency: line.currency,
    durationMs: line.durationMs,
    vitals: line.vitals,
  };
  return eventRow(project, fields, at, {
    visitorId: ids(line.visitorId),
    sessionId: ids(line.sessionId),
    countryCode: line.countryCode ?? '',
    region: line.region ?? '',
    city: line.city ?? '',
    device: line.device ?? '',
    browser: line.browser ?? '',
    browserVersion: '',
    os: line.os ?? '',
    osVersion: '',
  });
}

/** Parses and validates one line (fast acceptor first, the schema when unsure); a string is the error to report. */
export function parseImportLine(text: string, parseUrl?: (text: string) => URL | null): { line: ImportInput; url: URL; at: number } | string {
  if (text.length > MAX_LINE_CHARS) return `line is longer than ${MAX_LINE_CHARS} characters`;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'line is not valid JSON';
  }
  const fast = acceptImportLine(json, parseUrl);
  if (fast) return fast;
  const parsed = v.safeParse(ImportLine, json);
  return parsed.success ? { line: parsed.output, url: new URL(parsed.output.url), at: Date.parse(parsed.output.timestamp) } : firstIssue(parsed.issues);
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
  let batch = new RowBuffer(16 << 20);
  let blockIndex = 0;
  const inFlight: Promise<void>[] = [];
  // Import lines repeat ids and URLs (a visitor has many events, a site few pages). Parsed URLs
  // are shared by the rows built from them, which only read them.
  const ids = memoizeBounded(hashToUInt64, 100_000);
  const urls = memoizeBounded(parseHttpUrl, 10_000);
  // The first blocks are smaller so the engine starts early instead of waiting for a full block.
  let blockRows = Math.min(batchRows, 50_000);

  const send = async () => {
    const rows = batch.bytes();
    batch = new RowBuffer(rows.byteLength + (rows.byteLength >> 1));
    blockRows = Math.min(batchRows, blockRows * 2);
    const token = `${tokenBase}:${blockIndex++}`;
    if (inFlight.length >= MAX_INSERTS_IN_FLIGHT) await inFlight.shift();
    const insert = insertWithRetry(ch, rows, token);
    // Surface a failure at the next wait rather than as an unhandled rejection.
    insert.catch(() => {});
    inFlight.push(insert);
  };

  let lineNo = 0;
  for await (const chunkLines of lineBatches(body)) {
    // A buffered body keeps this loop in microtasks; let the insert's callbacks run between chunks.
    await yieldToEventLoop();
    for (const raw of chunkLines) {
      lineNo++;
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      // A line opening an object is not blank; only others need the trim.
      if (text.length === 0 || (text.charCodeAt(0) !== 0x7b && text.trim() === '')) continue;
      const parsed = parseImportLine(text, urls);
      if (typeof parsed === 'string') {
        result.rejected++;
        if (result.errors.length < MAX_LISTED_ERRORS) result.errors.push({ line: lineNo, error: parsed });
        continue;
      }
      batch.append(importRow(opts.project, parsed.line, parsed.url, ids, parsed.at));
      result.imported++;
      if (batch.rows >= blockRows) await send();
    }
  }
  if (batch.rows > 0) await send();
  for (const insert of inFlight) await insert;
  return result;
}

async function insertWithRetry(ch: ClickHouseClient, rows: Uint8Array, token: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await insertLines(ch, 'events', rows, { token, dateFormat: 'basic', parallelViews: true });
      return;
    } catch (err) {
      if (attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}
