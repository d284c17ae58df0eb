import { createClient, ErrorReply, MultiErrorReply } from 'redis';
import { Redis } from '@upstash/redis';
import type { Requester, UpstashRequest, UpstashResponse } from '@upstash/redis';
import { StoreUnavailableError } from '../errors.js';
import { redactSecrets } from '../log.js';
import { withinTime } from './event-loop.js';

type Command = (string | number | boolean | null)[];

export interface RespRedis {
  redis: Redis;
  close(): Promise<void>;
}

export interface RespRedisOptions {
  url: string;
  /** A command that has not answered by then fails as unavailable. */
  commandTimeoutMs?: number;
  /** Connecting (TCP, AUTH, SELECT) fails after this long instead of retrying forever (5 s). */
  connectTimeoutMs?: number;
}

/**
 * The client retries a failed handshake (a wrong password, a server that accepts TCP and never
 * answers) forever, so a start would hang silently: give up after `timeoutMs` with the last error.
 */
async function connectOrGiveUp(client: { connect(): Promise<unknown>; destroy(): void; readonly isOpen: boolean }, timeoutMs: number, lastError: () => Error | undefined): Promise<void> {
  const connecting = client.connect();
  connecting.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      connecting,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(lastError()?.message ?? `no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (err) {
    if (client.isOpen) client.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

const toArgs = (cmd: Command) => cmd.map((a) => (typeof a === 'string' ? a : String(a)));

/** A reply error of one command, kept as a value until it is answered as `{ error }`. */
class ReplyError {
  constructor(readonly message: string) {}
}
const replyError = (err: Error) => new ReplyError(err.message);

/**
 * An `@upstash/redis` client that speaks RESP to a local Redis instead of REST, so Node and
 * Workers share one code path. Commands fail fast (no offline queue) when Redis is down.
 */
export async function connectRespRedis(opts: RespRedisOptions): Promise<RespRedis> {
  // A local Redis answers in well under a millisecond; 500 ms leaves half of the 1 s budget for
  // a 503 to a loaded event loop when Redis hangs.
  const timeout = opts.commandTimeoutMs ?? 500;
  const client = createClient({
    url: opts.url,
    RESP: 2,
    disableOfflineQueue: true,
    // `guarded` below times commands out; the client's own 5 s default adds an AbortSignal and a
    // timer per command (~5% of the event path's CPU), so it is turned off.
    commandOptions: { timeout: 0 },
    socket: {
      connectTimeout: 1000,
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1000),
    },
  });
  // Connection errors are reported through the commands that fail; keep the process alive.
  let lastError: Error | undefined;
  client.on('error', (err: Error) => (lastError = err));
  await connectOrGiveUp(client, opts.connectTimeoutMs ?? 5000, () => lastError).catch((err: Error) => {
    // The URL may carry a password: only its redacted form reaches a message.
    throw new StoreUnavailableError(`Redis at ${redactSecrets(opts.url)} is not reachable: ${redactSecrets(err.message)}`);
  });

  const guarded = async (send: () => Promise<unknown>): Promise<unknown> => {
    if (!client.isReady) throw new StoreUnavailableError('Redis is not connected');
    try {
      return await withinTime(send(), timeout, () => {
        throw new StoreUnavailableError('Redis command timed out');
      });
    } catch (err) {
      if (err instanceof StoreUnavailableError) throw err;
      // A reply error (WRONGTYPE, NOSCRIPT…) is the command's answer, not an outage: it goes back
      // as the REST API sends it (`{ error }`), and @upstash/redis throws it as an UpstashError.
      // (node-redis throws SimpleError/BlobError, subclasses of ErrorReply; a name check misses them.)
      if (err instanceof ErrorReply) return replyError(err);
      throw new StoreUnavailableError((err as Error).message);
    }
  };
  const run = (cmd: Command) => guarded(() => client.sendCommand(toArgs(cmd)));
  const answer = (r: unknown): UpstashResponse<unknown> => (r instanceof ReplyError ? { error: r.message } : { result: r });

  const requester: Requester = {
    async request<T>(req: UpstashRequest): Promise<UpstashResponse<T>> {
      const path = req.path?.[0];
      // Pipelines answer with the bare array of per-command replies, as the REST API does.
      if (path === 'pipeline') {
        const results = await Promise.all((req.body as Command[]).map(run));
        return results.map(answer) as unknown as UpstashResponse<T>;
      }
      if (path === 'multi-exec') {
        const results = await guarded(async () => {
          const tx = client.multi();
          for (const c of req.body as Command[]) tx.addCommand(toArgs(c));
          try {
            return await tx.exec();
          } catch (err) {
            // Some commands of the transaction failed: answer each, as the REST API does.
            if (err instanceof MultiErrorReply) return err.replies.map((r) => (r instanceof ErrorReply ? replyError(r) : r));
            throw err;
          }
        });
        // The whole transaction refused (EXECABORT): every command answers that error.
        if (results instanceof ReplyError) return (req.body as Command[]).map(() => answer(results)) as unknown as UpstashResponse<T>;
        return (results as unknown[]).map(answer) as unknown as UpstashResponse<T>;
      }
      return answer(await run(req.body as Command)) as UpstashResponse<T>;
    },
  };

  return {
    redis: new Redis(requester),
    close: async () => {
      if (client.isOpen) await client.quit().catch(() => client.destroy());
    },
  };
}
