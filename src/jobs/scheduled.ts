import type { Deps } from '../deps.js';
import { rotateSalts } from '../ingest/enrich/visitor.js';
import { runPendingPurges } from '../projects/purge-again.js';
import { runDueExports, type ExportRun } from './scheduled-exports.js';
import type { Fetch } from './webhook.js';

export interface ScheduledSummary {
  exports: ExportRun[];
  errors: string[];
}

/**
 * The periodic jobs, run by the Workers cron trigger and by the Node in-process scheduler:
 * visitor-salt rotation, due scheduled exports and the second purge of deleted projects. Each is idempotent and locks in Redis, so
 * overlapping runners (several isolates or processes) do the work once.
 */
export async function runScheduledJobs(deps: Deps, now: number, opts: { fetch?: Fetch } = {}): Promise<ScheduledSummary> {
  const errors: string[] = [];
  await rotateSalts(deps.redis, now).catch((err) => errors.push(`salt rotation failed: ${(err as Error).message}`));
  await runPendingPurges(deps, now).catch((err) => errors.push(`purge of deleted projects failed: ${(err as Error).message}`));
  const exports = await runDueExports(deps, now, opts).catch((err) => {
    errors.push(`scheduled exports failed: ${(err as Error).message}`);
    return { runs: [], errors: [] };
  });
  return { exports: exports.runs, errors: [...errors, ...exports.errors] };
}
