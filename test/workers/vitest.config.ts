import { fileURLToPath } from 'node:url';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Tests that run inside workerd (the Worker entry with its wrangler.toml bindings: queue, DLQ,
 * R2, cron) against the local bridges that global-setup.ts starts in Node: Upstash REST over
 * the real Redis (db 9) and the ClickHouse HTTP interface over the embedded engine.
 */
export default defineConfig({
  root,
  plugins: [
    cloudflareTest(({ inject }) => ({
      main: './src/entry/worker.ts',
      wrangler: { configPath: './wrangler.toml' },
      miniflare: {
        bindings: {
          UPSTASH_REDIS_REST_URL: inject('upstashUrl'),
          UPSTASH_REDIS_REST_TOKEN: inject('upstashToken'),
          CLICKHOUSE_URL: inject('clickhouseUrl'),
          NODE_APP_URL: inject('nodeAppUrl'),
          EMAIL_API_URL: inject('emailApiUrl'),
          EMAIL_API_KEY: 're_workers_test',
          SMTP_FROM: 'Sightline <reports@workers.example>',
          RATE_LIMIT_EXPORT_PER_MIN: '1000',
        },
      },
    })),
  ],
  test: {
    include: ['test/workers/**/*.test.ts'],
    globalSetup: ['test/workers/global-setup.ts'],
    testTimeout: 90_000,
    hookTimeout: 90_000,
    // One Miniflare (one queue, one R2) for every file: the files share the bridges anyway.
    maxWorkers: 1,
    // CommonJS-only dependencies are pre-bundled to ESM for workerd (wrangler's esbuild does the same for deploys).
    deps: { optimizer: { ssr: { enabled: true, include: ['ua-parser-js'] } } },
  },
});
