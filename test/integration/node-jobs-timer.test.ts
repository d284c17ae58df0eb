import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from '@upstash/redis';
import { connectRespRedis } from '../../src/adapters/redis-resp.js';
import { createAccount, createApiKey } from '../../src/auth/store.js';
import { unique } from '../helpers/harness.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

/*
 * `npm start`'s entry as its own process, configured only by the environment: SMTP_URL points at
 * a real SMTP server of this test and JOBS_INTERVAL_SEC=1, so the in-process timer evaluates a
 * silent alert and its email arrives without anyone calling the jobs. The process gets a private
 * redis-server: its timer runs every job it finds, and must not touch other test files' reports
 * and alerts in the shared database.
 */
const REDIS_PORT = 17_000 + Math.floor(Math.random() * 900);
const REDIS_URL = `redis://127.0.0.1:${REDIS_PORT}`;
let redisServer: ChildProcess;
let sink: SmtpSink;
let server: ChildProcess;
let redis: Redis;
let closeRedis: () => Promise<void>;
let base: string;
let output = '';
const dataDir = mkdtempSync(join(tmpdir(), 'sightline-jobs-timer-'));

beforeAll(async () => {
  sink = await startSmtpSink();
  redisServer = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      ({ redis, close: closeRedis } = await connectRespRedis({ url: REDIS_URL }));
      await redis.ping();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const port = 19_000 + Math.floor(Math.random() * 900);
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, ['--import', 'tsx', 'src/entry/node.ts'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, REDIS_URL, SMTP_URL: sink.url, SMTP_FROM: 'Timer <timer@stats.example>', JOBS_INTERVAL_SEC: '1', PUBLIC_URL: 'https://stats.example' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  for (let i = 0; i < 400 && !output.includes('listening on'); i++) await new Promise((r) => setTimeout(r, 100));
  if (!output.includes('listening on')) throw new Error(`server did not start: ${output}`);
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
  await closeRedis?.();
  if (redisServer && redisServer.exitCode === null) {
    redisServer.kill('SIGTERM');
    await once(redisServer, 'exit');
  }
  await sink?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Node jobs timer (JOBS_INTERVAL_SEC) with SMTP_URL', () => {
  it('evaluates alerts on its own and sends the email through SMTP', async () => {
    const now = Date.now();
    const account = await createAccount(redis, { email: `${unique('timer')}@test.example`, password: 'correct horse battery' }, now);
    const { key } = await createApiKey(redis, { accountId: account.id, scope: 'write', name: 'w' }, now);
    const call = (method: string, path: string, body: string | object, type = 'application/json') =>
      fetch(`${base}${path}`, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': type }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const domain = `${unique('timer')}.example.com`;
    const created = await call('POST', '/api/v1/projects', { name: 'Timer', domain });
    expect(created.status).toBe(201);
    // Events three and two hours ago, none since: silent for the alert's hour.
    const lines = [3, 2].map((h, i) => JSON.stringify({ timestamp: new Date(now - h * 3_600_000).toISOString(), kind: 'pageview', visitorId: `v${i}`, sessionId: `s${i}`, url: `https://${domain}/` }));
    expect(await (await call('POST', `/api/v1/projects/${domain}/import`, `${lines.join('\n')}\n`, 'application/x-ndjson')).json()).toMatchObject({ imported: 2 });
    expect((await call('POST', `/api/v1/projects/${domain}/alerts`, { type: 'silent', hours: 1, email: ['timer-oncall@alerts.example'] })).status).toBe(201);

    const subject = `No events from ${domain} for 1 hour: the tracker may have stopped sending`;
    const [mail] = await sink.waitFor((m) => m.parsed.subject === subject, 1, 20_000);
    expect(mail!.from).toBe('timer@stats.example');
    expect(mail!.to).toEqual(['timer-oncall@alerts.example']);
    expect(mail!.parsed.text).toContain(`https://stats.example/#/p/${domain}`);
    // Later ticks keep evaluating but the alert does not fire again.
    await new Promise((r) => setTimeout(r, 2500));
    expect(sink.messages.filter((m) => m.parsed.subject === subject)).toHaveLength(1);
  }, 60_000);
});
