import * as v from 'valibot';
import { memoizeBounded } from './enrich/memo.js';
import { hashToUInt64Words } from './enrich/visitor.js';
import { firstIssue, ImportLine, parseHttpUrl, type ImportInput } from './event-schema.js';
import { acceptImportLine } from './fast-accept.js';
import { RowBuffer, TABLE_COLUMNS } from './insert.js';
import { textLines } from './line-text.js';
import { RowBinaryWriter, rowBinaryEncoder } from '../adapters/rowbinary.js';
import type { RowStore } from '../adapters/row-store.js';
import { eventRow } from './pipeline.js';
import type { Project } from '../projects/store.js';

/** A line longer than this is refused without being parsed (the tracker's own limit is 8 KB). */
export const MAX_LINE_CHARS = 64 * 1024;
/** Errors a chunk reports at most (the import lists the first 100 of all). */
const MAX_CHUNK_ERRORS = 100;

/**
 * An import line's session id: its `sessionId` within its visitor's (sources such as GA4 number
 * sessions per user), so two visitors' `"s1"` are two visits and a visit has one visitor. The
 * visitor id goes first with its length, so no other pair of strings gives the same text.
 */
export const importSessionId = (visitorId: string, sessionId: string) => hashToUInt64Words(`${visitorId.length}:${visitorId}${sessionId}`);

/** The `events` row of one import line: explicit time, identity and dimensions, no enrichment. */
export function importRow(
  project: Pick<Project, 'id' | 'domain'>,
  line: ImportInput,
  url = new URL(line.url),
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
    visitorId: hashToUInt64Words(line.visitorId),
    sessionId: importSessionId(line.visitorId, line.sessionId),
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

/** A column of the import's RowBinary rows: its name and ClickHouse type. */
export interface RowColumn {
  name: string;
  type: string;
}

/** The `events` columns an import sets: all but session_floor (an import cannot bound its sessions, see SESSION_LUA). */
export const IMPORT_COLUMNS: readonly string[] = TABLE_COLUMNS.events.filter((name) => name !== 'session_floor');

/**
 * The columns of RowBinary import rows (IMPORT_COLUMNS with the table's own types) when the store
 * takes them (RowStore.rowBinaryTypes); undefined for other stores, which get JSON rows. Plain
 * data, so a worker thread can build the same encoder.
 */
export async function importRowColumns(store: RowStore): Promise<RowColumn[] | undefined> {
  if (!store.rowBinaryTypes) return undefined;
  const types = await store.rowBinaryTypes('events');
  return IMPORT_COLUMNS.map((name) => {
    const type = types.get(name);
    if (!type) throw new Error(`events has no column ${name}`);
    return { name, type };
  });
}

/** Some lines of an import, parsed: the good ones as encoded rows, and what was refused. */
export interface ParsedChunk {
  /** The good rows, in line order: JSONEachRow lines or RowBinary. */
  bytes: Uint8Array;
  /** Byte offset in `bytes` where each row ends (so a block can end at an exact row count). */
  ends: Uint32Array;
  rejected: number;
  /** The latest `timestamp` of the good rows (epoch ms; −∞ when none): carries the project's latest-row stamp (src/adapters/versioned-row-store.ts). */
  latest: number;
  /** The first refusals, by 1-based line number of the whole import. */
  errors: { line: number; error: string }[];
}

/**
 * The line parser of one import: validates each line (fast acceptor first, the schema when
 * unsure) and encodes the good ones. Blank lines are skipped. It keeps the import's URL cache:
 * a site has few pages, and parsed URLs are shared by the rows built from them, which only read
 * them.
 */
/** Parses `lines` of an import, the first of them being line `firstLine` (1-based). */
export function createChunkParser(
  project: Pick<Project, 'id' | 'domain'>,
  /** Rows as RowBinary of these columns (see importRowColumns); JSONEachRow lines without them. */
  columns?: readonly RowColumn[],
): (lines: readonly string[], firstLine: number) => ParsedChunk {
  const urls = memoizeBounded(parseHttpUrl, 10_000);
  const encodeRow = columns ? rowBinaryEncoder(columns) : undefined;
  return (lines, firstLine) => {
    const bytesPerRow = encodeRow ? 256 : 512;
    const rows = encodeRow ? new RowBinaryWriter(Math.max(4096, lines.length * bytesPerRow)) : new RowBuffer(Math.max(4096, lines.length * bytesPerRow));
    const ends = new Uint32Array(lines.length);
    const errors: ParsedChunk['errors'] = [];
    let rejected = 0;
    let latest = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < lines.length; i++) {
      // A byte order mark opening a line is dropped wherever the line stands: a file's own, or one
      // of several files joined (parseLineBytes keeps them, so a chunk's start is no different).
      const line = lines[i]!;
      const raw = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
      const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      // A line opening an object is not blank; only others need the trim.
      if (text.length === 0 || (text.charCodeAt(0) !== 0x7b && text.trim() === '')) continue;
      const parsed = parseImportLine(text, urls);
      if (typeof parsed === 'string') {
        rejected++;
        if (errors.length < MAX_CHUNK_ERRORS) errors.push({ line: firstLine + i, error: parsed });
        continue;
      }
      if (parsed.at > latest) latest = parsed.at;
      const row = importRow(project, parsed.line, parsed.url, parsed.at);
      if (encodeRow) {
        row.ts = parsed.at;
        encodeRow(rows as RowBinaryWriter, row);
      } else (rows as RowBuffer).append(row);
      ends[rows.rows - 1] = rows.byteLength;
    }
    return { bytes: rows.bytes(), ends: ends.subarray(0, rows.rows), rejected, latest, errors };
  };
}

/** Parsed whole lines of an import: a ParsedChunk whose error lines count from 1, and how many lines it held. */
export interface ParsedLines extends ParsedChunk {
  lines: number;
}

/**
 * Parses bytes holding whole lines (the last one may lack its newline) with a chunk parser. The
 * request thread and the import worker threads both parse this way.
 */
export function parseLineBytes(parse: ReturnType<typeof createChunkParser>, bytes: Uint8Array): ParsedLines {
  const lines = textLines(bytes);
  // The text ends with a newline unless it is the body's unterminated last line.
  if (lines[lines.length - 1] === '') lines.pop();
  return { ...parse(lines, 1), lines: lines.length };
}
