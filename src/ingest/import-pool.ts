import { Worker } from 'node:worker_threads';
import type { ParsedLines, RowColumn } from './import-chunk.js';
import type { WorkerReply, WorkerRequest } from './import-worker.js';
import type { Project } from '../projects/store.js';

/** One import's parser: give it whole-line chunks in order; each answer counts its error lines from 1. */
export interface ImportParseSession {
  parse(bytes: Uint8Array): Promise<ParsedLines>;
  close(): void;
}

/**
 * Parses import lines off the request thread (Node: worker threads). Without one, the request
 * thread parses; with one, it only reads the body and assembles blocks while the engine inserts.
 */
export interface ImportParserPool {
  open(project: Pick<Project, 'id' | 'domain'>, columns?: RowColumn[]): ImportParseSession;
  close(): Promise<void>;
}

const TS_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.loader).then(({ register }) => { register(); return import(workerData.entry); });
`;

interface PooledWorker {
  worker: Worker;
  pending: Map<number, { resolve: (r: ParsedLines) => void; reject: (e: Error) => void }>;
}

/**
 * A pool of `size` worker threads parsing import chunks; an import's chunks go round the workers
 * and come back in order. From the TypeScript sources the workers load them through tsx, as the server does.
 * A worker that dies fails what it was parsing and is replaced for the next import.
 */
export function createImportWorkerPool(size: number): ImportParserPool {
  const workers: (PooledWorker | null)[] = Array.from({ length: size }, () => null);
  let nextSession = 1;
  let nextSeq = 1;

  const start = (slot: number): PooledWorker => {
    const worker = import.meta.url.endsWith('.ts')
      ? // Running from the TypeScript sources (npm start, tests): the worker registers tsx's loader first.
        new Worker(TS_BOOTSTRAP, { eval: true, workerData: { loader: import.meta.resolve('tsx/esm/api'), entry: new URL('./import-worker.ts', import.meta.url).href } })
      : new Worker(new URL('./import-worker.js', import.meta.url));
    // Idle workers must not keep the process alive.
    worker.unref();
    const pooled: PooledWorker = { worker, pending: new Map() };
    worker.on('message', (reply: WorkerReply) => {
      const waiting = pooled.pending.get(reply.seq);
      if (!waiting) return;
      pooled.pending.delete(reply.seq);
      if (reply.type === 'parsed') waiting.resolve(reply.result);
      else waiting.reject(new Error(reply.message));
    });
    const fail = (err: Error) => {
      for (const waiting of pooled.pending.values()) waiting.reject(err);
      pooled.pending.clear();
      if (workers[slot] === pooled) workers[slot] = null;
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`import worker exited with code ${code}`)));
    workers[slot] = pooled;
    return pooled;
  };
  const workerAt = (slot: number) => workers[slot] ?? start(slot);

  return {
    open(project, columns) {
      const session = nextSession++;
      // By worker, not slot: a worker that replaced a dead one has not seen this session yet.
      const used = new Set<PooledWorker>();
      let turn = 0;
      const send = (slot: number, msg: WorkerRequest, transfer?: ArrayBuffer[]) => {
        const pooled = workerAt(slot);
        if (!used.has(pooled)) {
          used.add(pooled);
          pooled.worker.postMessage({ type: 'open', session, project: { id: project.id, domain: project.domain }, columns } satisfies WorkerRequest);
        }
        pooled.worker.postMessage(msg, transfer);
        return pooled;
      };
      return {
        parse(bytes) {
          const slot = turn++ % size;
          const seq = nextSeq++;
          // A copy the worker can own: the caller's bytes may view a larger (or Node's shared) buffer.
          // (Not Buffer#slice, which is a view.)
          const own = new Uint8Array(bytes);
          return new Promise<ParsedLines>((resolve, reject) => {
            const pooled = send(slot, { type: 'parse', session, seq, bytes: own }, [own.buffer as ArrayBuffer]);
            pooled.pending.set(seq, { resolve, reject });
          });
        },
        close() {
          for (const pooled of used) if (workers.includes(pooled)) pooled.worker.postMessage({ type: 'close', session } satisfies WorkerRequest);
        },
      };
    },
    async close() {
      await Promise.all(workers.map((w) => w?.worker.terminate()));
      workers.fill(null);
    },
  };
}
