import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/workers runs inside workerd under its own config (test/workers/vitest.config.ts).
    exclude: ['test/workers/**', 'node_modules/**'],
    // chdb is a process-wide engine with one data directory: every test file gets its own fork.
    pool: 'forks',
    isolate: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A report behind a dashboard card can take over a second on a busy two-core host (the 1 s
    // default failed CI once while the other test fork was loading ClickHouse).
    expect: { poll: { timeout: 10_000 } },
    reporters: ['default'],
  },
});
