/**
 * `npm run dev`: the Worker under `wrangler dev`, against the local bridges:
 * the embedded ClickHouse (migrated, data under DATA_DIR) behind the ClickHouse HTTP bridge and
 * the Redis at REDIS_URL behind the Upstash REST bridge. Their URLs reach the Worker as
 * `--var`s. Prints the local URL; Ctrl-C stops wrangler, the bridges and the engine.
 * Env: PORT (8787), DATA_DIR (./data), REDIS_URL (redis://127.0.0.1:6379).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { connectNodeClickHouse } from '../src/adapters/node-clickhouse.js';
import { migrate } from '../src/adapters/migrate.js';
import { parseConfig } from '../src/config.js';
import { ensureLocalRedis } from '../src/entry/local-redis.js';
import { logError, logInfo } from '../src/log.js';
import { startClickHouseBridge } from './bridges/clickhouse-http.js';
import { startUpstashBridge } from './bridges/upstash-rest.js';

async function main() {
  const config = parseConfig(process.env);
  await ensureLocalRedis(config.REDIS_URL, config.DATA_DIR);
  const { client: clickhouse, close: closeClickHouse } = await connectNodeClickHouse({ dataDir: config.DATA_DIR });
  await migrate(clickhouse, { retentionDays: config.RETENTION_DAYS });
  const token = randomBytes(16).toString('hex');
  const ch = await startClickHouseBridge({ clickhouse });
  const upstash = await startUpstashBridge({ redisUrl: config.REDIS_URL, token });
  logInfo(`[sightline] bridges: ClickHouse HTTP ${ch.url}, Upstash REST ${upstash.url} (Redis ${config.REDIS_URL})`);

  const vars = { CLICKHOUSE_URL: ch.url, UPSTASH_REDIS_REST_URL: upstash.url, UPSTASH_REDIS_REST_TOKEN: token };
  const child = spawn(
    'npx',
    [
      'wrangler', 'dev',
      '--ip', '127.0.0.1',
      '--port', String(config.PORT),
      '--persist-to', resolve(join(config.DATA_DIR, 'wrangler')),
      '--show-interactive-dev-session=false',
      ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`]),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, WRANGLER_SEND_METRICS: 'false' }, detached: true },
  );
  let announced = false;
  child.stdout.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    process.stdout.write(text);
    const ready = /Ready on (http:\/\/\S+)/.exec(text);
    if (ready && !announced) {
      announced = true;
      console.log(`[sightline] dev Worker listening on ${ready[1]}`);
    }
  });

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    // wrangler runs workerd as its own child: signal the whole group.
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
      await new Promise((r) => child.once('exit', r));
    }
    await upstash.close();
    await ch.close();
    // Waits for an insert the bridge was still running: exiting under it crashes the process.
    await closeClickHouse();
    process.exit(code);
  };
  child.once('exit', (code) => void stop(code ?? 1));
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
}

main().catch((err) => {
  logError(`[sightline] dev failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
