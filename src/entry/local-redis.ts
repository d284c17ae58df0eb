import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createConnection } from 'node:net';
import { logInfo, redactSecrets } from '../log.js';

/** True when something accepts TCP connections at host:port within the timeout. */
export function isListening(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host, port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/**
 * `npm start` on a machine with no Redis running: start a private redis-server keeping its
 * data (AOF) under DATA_DIR/redis. Refuses with a clear message when there is none to start.
 */
export async function ensureLocalRedis(redisUrl: string, dataDir: string): Promise<void> {
  const url = new URL(redisUrl);
  const shown = redactSecrets(redisUrl);
  const host = url.hostname || '127.0.0.1';
  const port = Number(url.port || 6379);
  if (await isListening(host, port)) return;
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
    throw new Error(`Redis at ${shown} is not reachable. Start it, or point REDIS_URL at a running Redis.`);
  }
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error(
      `Nothing answers at ${shown} and redis-server is not installed. Install it (apt-get install redis-server) or set REDIS_URL.`,
    );
  }
  const dir = resolve(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const child = spawn('redis-server', ['--port', String(port), '--bind', host, '--dir', dir, '--appendonly', 'yes', '--save', ''], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  for (let i = 0; i < 50; i++) {
    if (await isListening(host, port, 200)) {
      logInfo(`[sightline] started a private redis-server on ${host}:${port} (data in ${dir})`);
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis-server did not start on ${host}:${port}`);
}
