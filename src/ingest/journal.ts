import { randomUUID } from 'node:crypto';
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { IngestTable } from './insert.js';

/** A batch a previous process left behind, to insert again under its token. */
export interface RecoveredBatch {
  table: IngestTable;
  token: string;
  /**
   * Reads its rows from disk (whole lines only), when the batcher has room for them: a backlog
   * of any size is never held at once. Null when no whole line is left (the file is removed).
   */
  load(): { body: Uint8Array; rows: number } | null;
}

/**
 * Where the batcher keeps a copy of every row it has acknowledged until ClickHouse has it, so a
 * crash (kill -9, out of memory) loses nothing: the next process inserts what is left.
 */
export interface BatchJournal {
  /** Adds encoded rows to the table's open batch, all or none; they are in the OS's hands when this returns. */
  append(table: IngestTable, bytes: Uint8Array): void;
  /** The open batch was sealed under `token`: keep it under that token. */
  seal(table: IngestTable, token: string): void;
  /** The batch is stored in ClickHouse: forget it. */
  done(table: IngestTable, token: string): void;
  /**
   * Batches left by an earlier process, oldest first: sealed ones keep their token, open ones get
   * one (renamed at once, so new appends start a new file). Nothing is read until `load`.
   */
  recover(): RecoveredBatch[];
}

const TABLES: readonly IngestTable[] = ['events', 'bot_hits'];
const openName = (table: IngestTable) => `open-${table}.jsonl`;
const sealedName = (table: IngestTable, token: string) => `${table}.${token}.jsonl`;
const SEALED = /^(events|bot_hits)\.([0-9a-f-]{36})\.jsonl$/;

/** Whole lines only: a crash in the middle of a write leaves at most one partial last line. */
function wholeLines(bytes: Uint8Array): { body: Uint8Array; rows: number } {
  const end = bytes.lastIndexOf(0x0a) + 1;
  let rows = 0;
  for (let i = 0; i < end; i++) if (bytes[i] === 0x0a) rows++;
  return { body: bytes.subarray(0, end), rows };
}

/**
 * A journal of plain files in `dir`: one append-only file per table for the open batch, renamed
 * to `{table}.{token}.jsonl` when sealed and removed once inserted. Appends are synchronous
 * writes (a few µs; the page cache, not the disk), so a row is safe from a process crash before
 * the 202 goes out; a power cut can still take the last moments.
 */
export function fileJournal(dir: string): BatchJournal {
  mkdirSync(dir, { recursive: true });
  /** The open file of each table, and its size (where a failed append truncates back to). */
  const files = new Map<IngestTable, { fd: number; size: number }>();
  const fileOf = (table: IngestTable) => {
    let file = files.get(table);
    if (file === undefined) {
      const fd = openSync(join(dir, openName(table)), 'a');
      file = { fd, size: fstatSync(fd).size };
      files.set(table, file);
    }
    return file;
  };
  const closeOpen = (table: IngestTable) => {
    const file = files.get(table);
    if (file !== undefined) closeSync(file.fd);
    files.delete(table);
  };
  return {
    append(table, bytes) {
      const file = fileOf(table);
      try {
        for (let written = 0; written < bytes.byteLength; ) written += writeSync(file.fd, bytes, written);
      } catch (err) {
        // All or nothing: rows whose writers are told of the failure must not come back after a crash.
        try {
          ftruncateSync(file.fd, file.size);
        } catch {
          // Nothing more to do; the next start drops at most a partial last line.
        }
        throw err;
      }
      file.size += bytes.byteLength;
    },
    seal(table, token) {
      closeOpen(table);
      renameSync(join(dir, openName(table)), join(dir, sealedName(table, token)));
    },
    done(table, token) {
      unlinkSync(join(dir, sealedName(table, token)));
    },
    recover() {
      const found: (RecoveredBatch & { order: number })[] = [];
      for (const name of readdirSync(dir)) {
        const sealed = SEALED.exec(name);
        const table = sealed ? (sealed[1] as IngestTable) : TABLES.find((t) => name === openName(t));
        if (!table) continue;
        let token = sealed?.[2];
        if (!token) {
          // Never sent: it becomes a sealed batch of its own (the partial line, if any, is dropped on load).
          closeOpen(table);
          token = randomUUID();
          renameSync(join(dir, name), join(dir, sealedName(table, token)));
        }
        const path = join(dir, sealedName(table, token));
        const load = () => {
          const { body, rows } = wholeLines(readFileSync(path));
          if (rows > 0) return { body, rows };
          unlinkSync(path);
          return null;
        };
        found.push({ table, token, load, order: sealed ? 0 : 1 });
      }
      // Batches sealed before the crash go before the rows that were still open.
      return found.sort((a, b) => a.order - b.order).map(({ order: _order, ...batch }) => batch);
    },
  };
}
