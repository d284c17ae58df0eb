/**
 * The slice of the Workers runtime API this project uses, declared here so the Worker entry
 * type-checks beside Node and DOM types (the full @cloudflare/workers-types would clash with
 * them). Shapes follow the runtime; `worker-configuration.d.ts` (wrangler types) names the bindings.
 */
interface Queue<Body = unknown> {
  send(body: Body, options?: { contentType?: string; delaySeconds?: number }): Promise<void>;
  sendBatch(messages: Iterable<{ body: Body; contentType?: string; delaySeconds?: number }>): Promise<void>;
}

interface Message<Body = unknown> {
  readonly id: string;
  readonly timestamp: Date;
  readonly body: Body;
  readonly attempts: number;
  ack(): void;
  retry(options?: { delaySeconds?: number }): void;
}

interface MessageBatch<Body = unknown> {
  readonly queue: string;
  readonly messages: readonly Message<Body>[];
  ackAll(): void;
  retryAll(options?: { delaySeconds?: number }): void;
}

interface R2Object {
  key: string;
  size: number;
  uploaded: Date;
  httpMetadata?: { contentType?: string };
}
interface R2ObjectBody extends R2Object {
  body: ReadableStream;
  text(): Promise<string>;
}
interface R2Bucket {
  put(key: string, value: ReadableStream | ArrayBuffer | string, options?: { httpMetadata?: { contentType?: string } }): Promise<R2Object>;
  get(key: string): Promise<R2ObjectBody | null>;
  list(options?: { prefix?: string; limit?: number; cursor?: string }): Promise<{ objects: R2Object[]; truncated: boolean; cursor?: string }>;
  delete(key: string | string[]): Promise<void>;
}

interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

interface ScheduledController {
  readonly scheduledTime: number;
  readonly cron: string;
  noRetry(): void;
}
