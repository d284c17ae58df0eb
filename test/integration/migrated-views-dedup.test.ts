import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations, viewsModifiedBy } from '../../src/adapters/migrate.js';
import { tempDirs } from '../helpers/temp-dirs.js';

/**
 * A batch stored by the process that applied the migrations, then sent again under the same token
 * by the next process on the same data (a journal replay after a crash, an import retried across a
 * restart), is stored once in `events` and in every rollup. Before the views a migration alters
 * were attached again, `stats_15m` and `stats_1d` (altered by 0021) counted it twice.
 */
const run = promisify(execFile);
const dirs = tempDirs();
afterAll(() => dirs.removeAll());

/** The batch's last instant, the same for every process: each sends the same rows. */
const BATCH_AT = Date.now();

/** One start of the engine on `dataDir` in a process of its own that stores the batch under `token`: what each table then holds. */
async function storeInNewProcess(dataDir: string, token: string): Promise<Record<string, number>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/store-batch-once.ts', dataDir, token, String(BATCH_AT)], { timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, number>;
}

describe('views altered by a migration', () => {
  it('are found in the migrations that alter them', async () => {
    const altered = (await loadMigrations()).flatMap((m) => viewsModifiedBy(m.statements));
    expect(altered).toEqual(['stats_15m_mv', 'stats_1d_from_15m_mv']);
    expect(viewsModifiedBy(['ALTER TABLE some_mv MODIFY QUERY SELECT 1', 'ALTER TABLE t ADD COLUMN x UInt8', 'SELECT 1'])).toEqual(['some_mv']);
  });

  it('dedupe a batch the migrating process stored when a later process sends it again', async () => {
    const dataDir = dirs.make('migrated-views');
    // The first process creates the store: every migration runs in it.
    const first = await storeInNewProcess(dataDir, 'batch-once');
    expect(first).toMatchObject({ events: 50, stats_15m: 46, stats_1d: 46, pages_15m: 40, custom_events_1d: 4 });
    // The next start attaches every view from its stored definition, and sends the same batch again.
    const again = await storeInNewProcess(dataDir, 'batch-once');
    expect(again).toEqual(first);
    // A third process holds the views as the second did.
    expect(await storeInNewProcess(dataDir, 'batch-once')).toEqual(first);
  }, 300_000);
});
