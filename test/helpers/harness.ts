import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createApp, type App } from '../../src/app.js';
import { createServices, type Services } from '../../src/services.js';
import { createNodeServer } from '../../src/ingest/node-event-listener.js';
import { systemClock, type Clock } from '../../src/adapters/clock.js';
import { parseConfig } from '../../src/config.js';
import type { Deps } from '../../src/deps.js';
import { directSink } from '../../src/ingest/direct-sink.js';
import type { EventSink } from '../../src/ingest/sink.js';
import { buildNodeRuntime, type NodeRuntime } from '../../src/entry/node-deps.js';
import { connectRespRedis } from '../../src/adapters/redis-resp.js';
import { createAccount, createApiKey, createSession } from '../../src/auth/store.js';

/** Redis database the tests use, so a developer's local data (db 0) is never touched. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/9';

/** PBKDF2 iterations of test accounts' passwords (production: DEFAULT_PASSWORD_ITERATIONS). */
export const TEST_PASSWORD_ITERATIONS = 1_000;

/** The embedded engine allows one data directory per process: every test file shares this one. */
export const TEST_DATA_DIR = join(tmpdir(), `sightline-test-${process.pid}`);
/**
 * This process's data versions: each test process has its own embedded ClickHouse, so it keeps
 * its own versions too. With the shared key, another file's write of unknown projects (moving
 * every project's version) made this process's cached answers count as stale mid-test.
 */
export const TEST_DATA_VERSION_KEY = `dataversion:test:${process.pid}:${Date.now()}`;
let shared: Promise<NodeRuntime> | null = null;
/**
 * The clock the shared runtime's own parts read (the row store's closed-hours check): the latest
 * harness's, the same as its deps' clock, so writes and reports of a test agree on what today is.
 */
let runtimeClockOf: Clock = systemClock;
const runtimeClock: Clock = { now: () => runtimeClockOf.now() };
const extraClosers: (() => Promise<void>)[] = [];

export interface Harness {
  app: App;
  deps: Deps;
  /** The app's services (caches, throttle), for servers that share them (the Node event fast path). */
  services: Services;
  runtime: NodeRuntime;
  /** In-process request with optional Bearer token and JSON body. */
  call(method: string, path: string, opts?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  /** A fresh account with a password, a write key, a read key and a session token. */
  user(label?: string): Promise<TestUser>;
  /** A unique domain for this test run. */
  domain(label?: string): string;
}

export interface TestUser {
  accountId: string;
  email: string;
  password: string;
  writeKey: string;
  readKey: string;
  session: string;
}

const randomOctet = () => 1 + Math.floor(Math.random() * 254);

export const unique = (label = 'x') => `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * Builds the real app over the real Redis and the embedded ClickHouse (one per process).
 * `env` overrides configuration; `clock`, `sink` and `mailer` replace those adapters.
 */
export async function createHarness(
  opts: { env?: Record<string, string>; clock?: Clock; sink?: (deps: Omit<Deps, 'sink'>) => EventSink; mailer?: Deps['mailer'] } = {},
): Promise<Harness> {
  // Sign-ins of every test file share one address in-process; test/integration/auth-limit.test.ts checks the limit.
  // Answers are not refreshed in the background here: tests count what the cache computes
  // (test/integration/answer-refresh.test.ts turns refreshing on for its own cache).
  const baseEnv = { DATA_DIR: TEST_DATA_DIR, REDIS_URL: TEST_REDIS_URL, RATE_LIMIT_AUTH_PER_MIN: '100000', ANSWER_REFRESH_MIN: '0' };
  shared ??= buildNodeRuntime(parseConfig(baseEnv), { makeSink: (d) => directSink(d.rowStore), dataVersionKey: TEST_DATA_VERSION_KEY, clock: runtimeClock });
  runtimeClockOf = opts.clock ?? systemClock;
  const base = await shared;
  const config = parseConfig({ ...baseEnv, ...opts.env });
  let redis = base.deps.redis;
  if (config.REDIS_URL !== TEST_REDIS_URL) {
    // A test with its own Redis (e.g. one it stops on purpose) gets its own connection.
    const own = await connectRespRedis({ url: config.REDIS_URL });
    extraClosers.push(own.close);
    redis = own.redis;
  }
  // Password hashes at the production count (600,000) cost ~0.3 s each on a busy host; test accounts
  // use fewer. test/integration/password-hygiene.test.ts checks the default and the upgrade.
  const deps: Deps = { ...base.deps, config, redis, clock: opts.clock ?? systemClock, passwordIterations: TEST_PASSWORD_ITERATIONS,
    ...(opts.mailer ? { mailer: opts.mailer } : {}),
  };
  if (opts.sink) deps.sink = opts.sink(deps);
  const services = createServices(deps);
  const app = createApp(deps, services);
  // In-process requests have no socket: each harness gets an address of its own (as @hono/node-server's
  // getConnInfo reads it), so per-address limits (share API, sign-ins, ingest) of one test file are
  // not used up by another's.
  const inProcessPeer = { incoming: { socket: { remoteAddress: `127.${randomOctet()}.${randomOctet()}.${randomOctet()}` } } };
  // Tests that call app.request themselves get the same address.
  const request = app.request;
  app.request = ((input, init, env, ctx) => request(input, init, env ?? inProcessPeer, ctx)) as typeof app.request;
  const call: Harness['call'] = (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers.Authorization = `Bearer ${o.token}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
      headers['Content-Type'] ??= 'application/json';
    }
    return Promise.resolve(app.request(path, { method, headers, body }));
  };
  return {
    app,
    deps,
    services,
    runtime: base,
    call,
    domain: (label = 'site') => `${unique(label)}.example.com`,
    async user(label = 'user') {
      const now = deps.clock.now();
      const email = `${unique(label)}@test.example`;
      const password = 'correct horse battery';
      const account = await createAccount(deps.redis, { email, password }, now, { passwordIterations: deps.passwordIterations });
      const write = await createApiKey(deps.redis, { accountId: account.id, scope: 'write', name: 'w' }, now);
      const read = await createApiKey(deps.redis, { accountId: account.id, scope: 'read', name: 'r' }, now);
      const session = await createSession(deps.redis, account.id, now);
      return { accountId: account.id, email, password, writeKey: write.key, readKey: read.key, session: session.token };
    },
  };
}

/** Rows of `projectId` in the events table: what tests of the write path count exactly. */
export async function countEvents(h: Pick<Harness, 'deps'>, projectId: string): Promise<number> {
  const rs = await h.deps.clickhouse.query({ query: 'SELECT count() AS n FROM events WHERE project_id = {id:String}', query_params: { id: projectId }, format: 'JSONEachRow' });
  return Number((await rs.json<{ n: string }>())[0].n);
}

/** Closes the shared runtime and removes its data directory; call in afterAll. */
export async function closeHarness(): Promise<void> {
  for (const close of extraClosers.splice(0)) await close();
  if (!shared) return;
  const rt = await shared;
  shared = null;
  await rt.deps.redis.del(TEST_DATA_VERSION_KEY).catch(() => {});
  await rt.close();
  rmSync(TEST_DATA_DIR, { recursive: true, force: true });
}

export interface Listening {
  url: string;
  close(): Promise<void>;
}

const listening = (server: ServerType, port: number): Listening => ({
  url: `http://127.0.0.1:${port}`,
  close: () => new Promise<void>((done) => server.close(() => done())),
});

/** Serves an app on a random loopback port; for clients that need real HTTP. */
export async function listen(app: { fetch: (req: Request) => Response | Promise<Response> }): Promise<Listening> {
  return new Promise((resolve) => {
    const server: ServerType = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(listening(server, info.port)));
  });
}

/** Serves a harness's app as `npm start` does: `POST /api/event` on the Node fast path, the rest by Hono. */
export async function listenAsNode(h: Pick<Harness, 'app' | 'services'>): Promise<Listening> {
  const server = createNodeServer(h.app.fetch, h.services);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return listening(server, (server.address() as AddressInfo).port);
}
