import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL } from '../helpers/harness.js';
import { freePort } from '../helpers/node-server.js';

// `npm start` runs a shell line; without `exec` the shell died of SIGTERM and left the server
// running behind it. A process manager signals the npm process: the server must end with it.

const dataDir = mkdtempSync(join(tmpdir(), 'sightline-npm-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Processes whose environment names this test's data directory (the server and anything it started). */
function serverProcesses(): number[] {
  const mine: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(`DATA_DIR=${dataDir}`)) mine.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return mine;
}

describe('npm start and signals', () => {
  it('SIGTERM to the npm process ends the server and every process under it within 10 s', async () => {
    const port = await freePort();
    const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, REDIS_URL: TEST_REDIS_URL };
    const npm = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 600 && !out.includes('listening on'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('listening on');
    expect(await accepts(port)).toBe(true);
    expect(serverProcesses().length).toBeGreaterThan(1);

    const signalled = Date.now();
    npm.kill('SIGTERM');
    while (Date.now() - signalled < 10_000 && serverProcesses().length > 0) await new Promise((r) => setTimeout(r, 100));
    expect(serverProcesses()).toEqual([]);
    expect(await accepts(port)).toBe(false);
    expect(out).toContain('SIGTERM: shutting down');
  }, 90_000);
});
