import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeHarness, createHarness, type Harness, type TestUser } from '../helpers/harness.js';

/**
 * Redis stopped mid-run: a private redis-server on its own port (AOF in a temp dir, so the
 * accounts survive a restart). Authenticated routes must answer 503 with Retry-After within
 * 1 s, never 401 and never 200, and recover by themselves when Redis returns.
 */
const PORT = 6390 + Math.floor(Math.random() * 2000);
const DIR = mkdtempSync(join(tmpdir(), 'sightline-outage-'));
const P = '/api/v1/projects';
let server: ChildProcess | null = null;
let h: Harness;
let u: TestUser;
let cold: TestUser;
let domain: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True once something accepts TCP connections on the port and answers PING. */
function pings(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: PORT });
    socket.setTimeout(300);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => {
      socket.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function startRedis(): Promise<void> {
  server = spawn('redis-server', [
    '--port', String(PORT), '--bind', '127.0.0.1', '--dir', DIR, '--save', '',
    '--appendonly', 'yes', '--appendfsync', 'always',
  ], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (await pings()) return;
    await sleep(50);
  }
  throw new Error(`redis-server did not start on port ${PORT}`);
}

async function stopRedis(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const proc = server;
  server = null;
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill(signal);
  await exited;
}

/** A request and how long it took. */
async function timed(method: string, path: string, token?: string, body?: unknown) {
  const start = performance.now();
  const res = await h.call(method, path, { token, body });
  return { res, ms: performance.now() - start, body: await res.json() };
}

/** Every authenticated route answers 503 + Retry-After within 1 s; never 401, never 200. */
async function expectUnavailableEverywhere() {
  const calls: [string, string, string, unknown?][] = [
    ['GET', P, u.readKey], // warm key cache: only the rate limiter needs Redis
    ['GET', `${P}/${domain}`, u.readKey],
    ['POST', P, u.writeKey, { name: 'During outage', domain: 'outage.example.com' }],
    ['PATCH', `${P}/${domain}`, u.writeKey, { name: 'During outage' }],
    ['POST', `${P}/${domain}/install/verify`, u.writeKey],
    ['GET', P, cold.readKey], // never used: the key lookup itself needs Redis
    ['GET', P, u.session],
    ['GET', '/api/account/profile', u.session],
    ['GET', '/api/account/keys', u.session],
  ];
  for (const [method, path, token, body] of calls) {
    const { res, ms, body: answer } = await timed(method, path, token, body);
    expect(res.status, `${method} ${path}`).toBe(503);
    expect(Number(res.headers.get('Retry-After')), `${method} ${path}`).toBeGreaterThan(0);
    expect(answer).toEqual({ error: expect.any(String) });
    expect(ms, `${method} ${path} took ${ms.toFixed(0)} ms`).toBeLessThan(1000);
  }
}

/** Polls until the warm key gets 200 again; returns how long that took. */
async function recoveryTime(limitMs: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < limitMs) {
    const res = await h.call('GET', P, { token: u.readKey });
    if (res.status === 200) return performance.now() - start;
    expect(res.status).toBe(503);
    await sleep(100);
  }
  throw new Error(`no recovery within ${limitMs} ms`);
}

beforeAll(async () => {
  await startRedis();
  h = await createHarness({ env: { REDIS_URL: `redis://127.0.0.1:${PORT}` } });
  [u, cold] = await Promise.all([h.user('outage'), h.user('cold')]);
  domain = h.domain('outage');
  expect((await h.call('POST', P, { token: u.writeKey, body: { name: 'Outage', domain } })).status).toBe(201);
});

afterAll(async () => {
  await closeHarness();
  if (server) {
    server.kill('SIGCONT');
    await stopRedis('SIGKILL');
  }
  rmSync(DIR, { recursive: true, force: true });
});

describe('Redis outage', () => {
  it('works while Redis is up (and warms the key cache)', async () => {
    const { res } = await timed('GET', P, u.readKey);
    expect(res.status).toBe(200);
    expect((await timed('GET', `${P}/${domain}`, u.readKey)).res.status).toBe(200);
  });

  it('Redis stopped: 503 with Retry-After within 1 s on every authenticated route, never 401 or 200', async () => {
    await stopRedis('SIGTERM');
    expect(await pings()).toBe(false);
    await expectUnavailableEverywhere();
  });

  it('malformed credentials still get 401 while Redis is down (no lookup needed)', async () => {
    const res = await h.call('GET', P, { token: 'sl_garbled' });
    expect(res.status).toBe(401);
    expect((await h.call('GET', P)).status).toBe(401);
  });

  it('an event whose site cannot be a project id is unknown-site while Redis is down: no lookup, no 503', async () => {
    for (const site of ['prj_x:members', '*', `${'prj_'}${'a'.repeat(20)}:installed`]) {
      const res = await h.call('POST', '/api/event', { body: { site, kind: 'pageview', url: `https://${domain}/` } });
      expect(res.status, site).toBe(202);
      expect(res.headers.get('x-sightline-dropped'), site).toBe('unknown-site');
    }
  });

  it('Redis back on the same port: the service recovers by itself', async () => {
    await startRedis();
    const ms = await recoveryTime(5000);
    expect(ms).toBeLessThan(5000);
    for (const token of [u.readKey, cold.readKey, u.session]) {
      expect((await h.call('GET', P, { token })).status).toBe(200);
    }
    const detail = await h.call('GET', `${P}/${domain}`, { token: u.readKey });
    expect((await detail.json()).name).toBe('Outage'); // the refused PATCH changed nothing
  });

  it('Redis hanging (process paused): 503 within 1 s, then recovery when it resumes', async () => {
    server!.kill('SIGSTOP');
    try {
      await expectUnavailableEverywhere();
    } finally {
      server!.kill('SIGCONT');
    }
    expect(await recoveryTime(5000)).toBeLessThan(5000);
    expect((await h.call('PATCH', `${P}/${domain}`, { token: u.writeKey, body: { name: 'After' } })).status).toBe(200);
  });
});
