import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A private redis-server for fault tests, on its own random port with its AOF in a temp dir (so
 * data survives a stop and start): the shared Redis on 6379 is never stopped.
 */
export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  /** The running process, or null while stopped. */
  readonly process: ChildProcess | null;
  /** True once something on the port answers PING. */
  pings(): Promise<boolean>;
  start(): Promise<void>;
  /** Stops it with `signal` (SIGTERM: a clean stop) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Kills it if running and removes its directory; for afterAll. */
  dispose(): Promise<void>;
}

export function privateRedis(): PrivateRedis {
  const port = 6390 + Math.floor(Math.random() * 2000);
  const dir = mkdtempSync(join(tmpdir(), 'sightline-redis-'));
  let server: ChildProcess | null = null;

  const pings = (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
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

  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const proc = server;
    server = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill(signal);
    await exited;
  };

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get process() {
      return server;
    },
    pings,
    async start() {
      server = spawn('redis-server', [
        '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
        '--appendonly', 'yes', '--appendfsync', 'always',
      ], { stdio: 'ignore' });
      for (let i = 0; i < 100; i++) {
        if (await pings()) return;
        await sleep(50);
      }
      throw new Error(`redis-server did not start on port ${port}`);
    },
    stop,
    async dispose() {
      if (server) {
        server.kill('SIGCONT');
        await stop('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
