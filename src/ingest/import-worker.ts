/**
 * Worker-thread side of ImportWorkerPool: parses the import chunks it is sent (whole lines, as
 * bytes) and answers the encoded rows, moving their buffers back instead of copying them.
 * One parser per import session, so each import keeps its own caches.
 */
import { parentPort } from 'node:worker_threads';
import { createChunkParser, parseLineBytes, type RowColumn } from './import-chunk.js';
import type { Project } from '../projects/store.js';

export type WorkerRequest =
  | { type: 'open'; session: number; project: Pick<Project, 'id' | 'domain'>; columns?: RowColumn[] }
  | { type: 'parse'; session: number; seq: number; bytes: Uint8Array }
  | { type: 'close'; session: number };

export type WorkerReply =
  | { type: 'parsed'; seq: number; result: import('./import-chunk.js').ParsedLines }
  | { type: 'failed'; seq: number; message: string };

const parsers = new Map<number, ReturnType<typeof createChunkParser>>();

parentPort?.on('message', (msg: WorkerRequest) => {
  if (msg.type === 'open') parsers.set(msg.session, createChunkParser(msg.project, msg.columns));
  else if (msg.type === 'close') parsers.delete(msg.session);
  else {
    try {
      const parser = parsers.get(msg.session);
      if (!parser) throw new Error(`import session ${msg.session} is not open`);
      const result = parseLineBytes(parser, msg.bytes);
      // The rows usually fill most of their buffer; sending a copy of the used part would cost a copy of it.
      const transfer = [result.bytes.buffer, result.ends.buffer].filter((b, i, all) => all.indexOf(b) === i) as ArrayBuffer[];
      parentPort!.postMessage({ type: 'parsed', seq: msg.seq, result } satisfies WorkerReply, transfer);
    } catch (err) {
      parentPort!.postMessage({ type: 'failed', seq: msg.seq, message: (err as Error).message } satisfies WorkerReply);
    }
  }
});
