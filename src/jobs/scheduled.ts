import type { Deps } from '../deps.js';
import { rotateSalts } from '../ingest/enrich/visitor.js';
import { runDueExports, type ExportRun } from './scheduled-exports.js';
import { runDueEmailReports, type EmailReportRun } from './scheduled-email-reports.js';
import type { Fetch } from './webhook.js';

export interface ScheduledSummary {
  exports: ExportRun[];
  emailReports: EmailReportRun[];
  errors: string[];
}

/** Test hooks: where webhooks go, and how long email retries wait. */
export interface JobOptions {
  fetch?: Fetch;
  emailRetryDelaysMs?: readonly number[];
}

/**
 * The periodic jobs, run by the Workers cron trigger and by the Node in-process scheduler:
 * visitor-salt rotation, due scheduled exports and due email reports. Each is idempotent and locks in Redis, so
 * overlapping runners (several isolates or processes) do the work once.
 */
export async function runScheduledJobs(deps: Deps, now: number, opts: JobOptions = {}): Promise<ScheduledSummary> {
  const errors: string[] = [];
  await rotateSalts(deps.redis, now).catch((err) => errors.push(`salt rotation failed: ${(err as Error).message}`));
  const exports = await runDueExports(deps, now, opts).catch((err) => {
    errors.push(`scheduled exports failed: ${(err as Error).message}`);
    return { runs: [], errors: [] };
  });
  const reports = await runDueEmailReports(deps, now, { delaysMs: opts.emailRetryDelaysMs }).catch((err) => {
    errors.push(`email reports failed: ${(err as Error).message}`);
    return { runs: [], errors: [] };
  });
  return { exports: exports.runs, emailReports: reports.runs, errors: [...errors, ...exports.errors, ...reports.errors] };
}
