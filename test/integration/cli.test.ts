import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { closeHarness, createHarness, TEST_DATA_DIR, TEST_REDIS_URL, unique, type Harness } from '../helpers/harness.js';
import { tempDirs } from '../helpers/temp-dirs.js';

/** The operator CLI (README "Commands"), run as a child process against the test Redis (db 9). */
let h: Harness;
const dirs = tempDirs();
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await closeHarness();
  dirs.removeAll();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `args`; `env` adds to the test's environment (the embedded store's DATA_DIR, say). */
function adminWith(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const { CLICKHOUSE_URL: _server, ...inherited } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'scripts/admin.ts', ...args], {
      cwd: process.cwd(),
      env: { ...inherited, REDIS_URL: TEST_REDIS_URL, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const admin = (...args: string[]) => adminWith({}, ...args);
const ok = (...args: string[]) => okWith({}, ...args);
const fails = (pattern: RegExp, ...args: string[]) => failsWith({}, pattern, ...args);

/** A successful run: exit 0, one JSON document on stdout. */
async function okWith(env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  const run = await adminWith(env, ...args);
  expect(run.stderr, run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
}

async function failsWith(env: Record<string, string>, pattern: RegExp, ...args: string[]): Promise<void> {
  const run = await adminWith(env, ...args);
  expect(run.code, `${args.join(' ')} exit`).not.toBe(0);
  expect(run.code).not.toBeNull();
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(pattern);
}

describe('npm run admin', () => {
  const email = `${unique('cli')}@test.example`;

  it('account:create, key:create, session:create, member:add and key:revoke print JSON and work', async () => {
    const account = await ok('account:create', '--email', email, '--password', 'cli password 1');
    expect(account).toEqual({ id: expect.stringMatching(/^acc_/), email });

    const write = await ok('key:create', '--email', email, '--scope', 'write', '--name', 'deploy');
    expect(write).toEqual({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^sl_[0-9A-Za-z]{28}$/), scope: 'write' });
    const read = await ok('key:create', '--email', email, '--scope', 'read');
    expect(read.scope).toBe('read');

    const domain = h.domain('cli');
    expect((await h.call('POST', '/api/v1/projects', { token: write.key as string, body: { name: 'CLI', domain } })).status).toBe(201);
    expect((await h.call('POST', '/api/v1/projects', { token: read.key as string, body: { name: 'CLI', domain: h.domain() } })).status).toBe(403);

    const session = await ok('session:create', '--email', email);
    expect(session).toEqual({ token: expect.stringMatching(/^sls_/) });
    const profile = await h.call('GET', '/api/account/profile', { token: session.token as string });
    expect(await profile.json()).toMatchObject({ id: account.id, email });
    const login = await h.call('POST', '/api/auth/login', { body: { email, password: 'cli password 1' } });
    expect(login.status).toBe(200);

    const memberEmail = `${unique('cli-member')}@test.example`;
    await ok('account:create', '--email', memberEmail);
    expect(await ok('member:add', '--domain', `https://www.${domain}/`, '--email', memberEmail, '--role', 'member')).toEqual({
      domain, email: memberEmail, role: 'member',
    });
    const memberKey = (await ok('key:create', '--email', memberEmail, '--scope', 'read')).key as string;
    const list = await (await h.call('GET', '/api/v1/projects', { token: memberKey })).json();
    expect(list.projects).toEqual([expect.objectContaining({ domain, accessRole: 'member' })]);

    expect(await ok('key:revoke', '--id', write.id as string)).toEqual({ id: write.id, revoked: true });
    // A fresh app (no cached lookups) refuses the revoked key; the other key still works.
    const fresh = createApp(h.deps);
    const auth = (k: unknown) => ({ headers: { Authorization: `Bearer ${k}` } });
    expect((await fresh.request('/api/v1/projects', auth(write.key))).status).toBe(401);
    expect((await fresh.request('/api/v1/projects', auth(read.key))).status).toBe(200);
  }, 180_000);

  it('errors: non-zero exit, nothing on stdout and a clear message on stderr', async () => {
    await Promise.all([
      fails(/unknown command frobnicate/, 'frobnicate'),
      fails(/missing --email/, 'account:create'),
      fails(/--email must be an email address/, 'account:create', '--email', 'not-an-email'),
      fails(/already exists/, 'account:create', '--email', email),
      fails(/no account with email nobody@nowhere\.example/, 'session:create', '--email', 'nobody@nowhere.example'),
      fails(/--scope must be read or write/, 'key:create', '--email', email, '--scope', 'admin'),
      fails(/no key with id key_nope/, 'key:revoke', '--id', 'key_nope'),
      fails(/--role must be admin or member/, 'member:add', '--domain', 'x.example.com', '--email', email, '--role', 'owner'),
      fails(/unknown option|Unknown option/i, 'account:create', '--email', email, '--colour', 'blue'),
      fails(/vitals:history takes no options/, 'vitals:history', '--email', email),
    ]);
  }, 180_000);

  it('vitals:history migrates the store it is given and moves nothing on a new one; refuses a store another process has open', async () => {
    expect(await okWith({ DATA_DIR: dirs.make('admin-store') }, 'vitals:history')).toEqual({ moved: 0, previousMark: null });
    // This process has the test store open, as `npm start` would.
    await failsWith({ DATA_DIR: TEST_DATA_DIR }, /Cannot lock file[^]*cannot open the embedded ClickHouse store in .*: if a server has it open, stop the server first/, 'vitals:history');
  }, 180_000);
});
