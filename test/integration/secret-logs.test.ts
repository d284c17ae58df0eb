import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectNodeClickHouse } from '../../src/adapters/node-clickhouse.js';
import { createApp } from '../../src/app.js';
import { closeHarness, createHarness, TEST_REDIS_URL, type Harness, type TestUser } from '../helpers/harness.js';
import { newProject } from '../helpers/report-fixtures.js';

/** No URL password reaches a log line or a client: the Node entry and the app under real faults. */
const SECRET = 'Pa55-w0rd-never-printed';
const dataDir = mkdtempSync(join(tmpdir(), 'sightline-secret-logs-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  output: string;
}

/** `npm start`'s entry with `env`; stdout and stderr together. */
function start(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'src/entry/node.ts'], {
      cwd: process.cwd(),
      env: { ...process.env, PORT: '18793', DATA_DIR: dataDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** A loopback port nothing listens on (connections are refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

describe('the Node entry with credentials in its URLs', () => {
  it('REDIS_URL to a host that cannot be reached: the message shows the URL with the password masked', async () => {
    const run = await start({ REDIS_URL: `redis://sightline:${SECRET}@sightline-unreachable.invalid:6379` });
    expect(run.code).toBe(1);
    expect(run.output).toContain('redis://sightline:***@sightline-unreachable.invalid:6379');
    expect(run.output).not.toContain(SECRET);
  });

  it('REDIS_URL with a password the server refuses: stops with the reason (no hang), password masked', async () => {
    const url = new URL(TEST_REDIS_URL);
    url.password = SECRET;
    const run = await start({ REDIS_URL: url.toString() });
    expect(run.code).toBe(1);
    expect(run.output).toMatch(/Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:6379\/9 is not reachable: \S+/);
    expect(run.output).not.toContain(SECRET);
  }, 60_000);

  it('CLICKHOUSE_URL with a password to an endpoint that refuses: nothing prints the password', async () => {
    const run = await start({ REDIS_URL: TEST_REDIS_URL, CLICKHOUSE_URL: `http://default:${SECRET}@127.0.0.1:${await closedPort()}` });
    expect(run.code).toBe(1);
    expect(run.output).toContain('failed to start');
    expect(run.output).not.toContain(SECRET);
  }, 60_000);

  it('a refused configuration value is named, not repeated', async () => {
    const run = await start({ REDIS_URL: `http://admin:${SECRET}@redis.internal` });
    expect(run.code).toBe(1);
    expect(run.output).toContain('REDIS_URL');
    expect(run.output).not.toContain(SECRET);
  });
});

describe('a 500 carries no internal text', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await h.user('owner');
  });
  afterAll(closeHarness);

  it('a report whose ClickHouse (URL with a password) refuses: generic 500 body, redacted log line', async () => {
    const site = await newProject(h, owner);
    const { client: clickhouse, rowStore } = await connectNodeClickHouse({ url: `http://default:${SECRET}@127.0.0.1:${await closedPort()}`, dataDir });
    const app = createApp({ ...h.deps, clickhouse, rowStore });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const res = await app.request(`/api/v1/projects/${site.domain}/stats?period=7d`, { headers: { Authorization: `Bearer ${owner.readKey}` } });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'Internal server error' });
      const lines = logged.mock.calls.map((args) => args.map(String).join(' ')).join('\n');
      expect(lines).toContain('[sightline] unhandled error');
      expect(lines).not.toContain(SECRET);
    } finally {
      logged.mockRestore();
      await clickhouse.close();
    }
  });
});
