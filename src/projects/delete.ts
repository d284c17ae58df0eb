import type { Deps } from '../deps.js';
import { scheduleStore, storeName } from '../export/schedule-store.js';
import { purgeProjectData } from './purge.js';
import { purgeAgainAt, schedulePurgeAgain } from './purge-again.js';
import { deleteProjectRecords, type Project } from './store.js';

/**
 * Deletes a project everywhere: buffered events are flushed, then its analytics rows, its export
 * schedule and files (DATA_DIR/exports or R2), and last its Redis records. A failure leaves a
 * project that can be deleted again, and no buffered row of it lands after the purge.
 *
 * `forgetProject` evicts this process's ingest cache at once; other processes stop accepting
 * events for the id when their cache entry expires (src/ingest/state.ts, under 5 s). What they
 * accepted meanwhile may be inserted after the purge: a second purge is scheduled for when their
 * batches are flushed (purge-again.ts, run by the periodic jobs).
 */
export async function deleteProject(
  deps: Pick<Deps, 'config' | 'redis' | 'clickhouse' | 'sink' | 'exportStore' | 'clock'>,
  project: Project,
  forgetProject: (id: string) => void = () => {},
): Promise<void> {
  await deps.sink.flush();
  await schedulePurgeAgain(deps.redis, project.id, purgeAgainAt(deps.clock.now(), deps.config.INGEST_FLUSH_MS));
  await purgeProjectData(deps.clickhouse, project.id);
  // The schedule goes first, so the cron writes no new file while the folder is emptied.
  await scheduleStore.remove(deps.redis, project.id);
  await deps.exportStore?.removeAll(storeName(project.id, ''));
  await deleteProjectRecords(deps.redis, project);
  forgetProject(project.id);
}
