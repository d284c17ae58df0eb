/// <reference types="@cloudflare/vitest-pool-workers/types" />
import { env, SELF } from 'cloudflare:test';
import { Redis } from '@upstash/redis/cloudflare';
import { createAccount, createApiKey } from '../../src/auth/store.js';

/** The Worker's bindings as this test config sets them (wrangler.toml plus the bridges' URLs). */
export interface TestEnv {
  UPSTASH_REDIS_REST_URL: string;
  UPSTASH_REDIS_REST_TOKEN: string;
  CLICKHOUSE_URL: string;
  NODE_APP_URL: string;
  EMAIL_API_URL: string;
  EVENTS_QUEUE: Queue<unknown>;
  EXPORTS: R2Bucket;
}
export const testEnv = env as unknown as TestEnv;

/** Redis through the Upstash bridge: what the Worker sees. */
export const bridgeRedis = () =>
  new Redis({ url: testEnv.UPSTASH_REDIS_REST_URL, token: testEnv.UPSTASH_REDIS_REST_TOKEN, enableTelemetry: false });

export const unique = (label: string) => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

export interface WorkerUser {
  accountId: string;
  writeKey: string;
  readKey: string;
}

/** An account with a write and a read key, made with the admin functions over the bridge. */
export async function makeUser(label = 'wk'): Promise<WorkerUser> {
  const redis = bridgeRedis();
  const now = Date.now();
  const account = await createAccount(redis, { email: `${unique(label)}@workers.example`, password: 'correct horse battery' }, now);
  const write = await createApiKey(redis, { accountId: account.id, scope: 'write', name: 'w' }, now);
  const read = await createApiKey(redis, { accountId: account.id, scope: 'read', name: 'r' }, now);
  return { accountId: account.id, writeKey: write.key, readKey: read.key };
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** What Cloudflare's edge would attach as `request.cf`. */
  cf?: Record<string, unknown>;
}

/** A request to `base` (the Worker by default, through SELF). */
export function call(method: string, path: string, opts: CallOptions = {}, base?: string): Promise<Response> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const init = { method, headers, body, ...(opts.cf ? { cf: opts.cf } : {}) } as RequestInit;
  return base ? fetch(new URL(path, base), init) : SELF.fetch(new URL(path, 'https://sightline.test'), init);
}

/** Polls `probe` until it returns a value `done` accepts, or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  do {
    last = await probe();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  } while (Date.now() < deadline);
  throw new Error(`condition not met in ${timeoutMs} ms; last value: ${JSON.stringify(last)}`);
}
