import type { Deps } from '../deps.js';
import { rotateSalts } from '../ingest/enrich/visitor.js';
import { runPendingPurges } from '../projects/purge-again.js';
import { runDueExports, type ExportRun } from './scheduled-exports.js';
import { runDueEmailReports, type EmailReportRun } from './scheduled-email-reports.js';
import { runAlerts, type AlertFiring } from './scheduled-alerts.js';
import type { Fetch } from './webhook.js';

export interface ScheduledSummary {
  exports: ExportRun[];
  emailReports: EmailReportRun[];
  alerts: AlertFiring[];
  errors: string[];
}

/** Test hooks: where webhooks go, how long email retries wait, and which projects' reports and alerts to handle (all when unset). */
export interface JobOptions {
  fetch?: Fetch;
  emailRetryDelaysMs?: readonly number[];
  onlyProjects?: ReadonlySet<string>;
}

/**
 * The periodic jobs, run by the Workers cron trigger and by the Node in-process scheduler:
 * visitor-salt rotation, due scheduled exports, due email reports, every alert and the second purge of deleted
 * projects. Each is idempotent and locks in Redis, so
 * overlapping runners (several isolates or processes) do the work once.
 */
export async function runScheduledJobs(deps: Deps, now: number, opts: JobOptions = {}): Promise<ScheduledSummary> {
  const errors: string[] = [];
  await rotateSalts(deps.redis, now).catch((err) => errors.push(`salt rotation failed: ${(err as Error).message}`));
  await runPendingPurges(deps, now).catch((err) => errors.push(`purge of deleted projects failed: ${(err as Error).message}`));
  const exports = await runDueExports(deps, now, opts).catch((err) => {
    errors.push(`scheduled exports failed: ${(err as Error).message}`);
    return { runs: [], errors: [] };
  });
  const reports = await runDueEmailReports(deps, now, { delaysMs: opts.emailRetryDelaysMs, onlyProjects: opts.onlyProjects }).catch((err) => {
    errors.push(`email reports failed: ${(err as Error).message}`);
    return { runs: [], errors: [] };
  });
  const alerts = await runAlerts(deps, now, { fetch: opts.fetch, delaysMs: opts.emailRetryDelaysMs, onlyProjects: opts.onlyProjects }).catch((err) => {
    errors.push(`alerts failed: ${(err as Error).message}`);
    return { fired: [], errors: [] };
  });
  return {
    exports: exports.runs,
    emailReports: reports.runs,
    alerts: alerts.fired,
    errors: [...errors, ...exports.errors, ...reports.errors, ...alerts.errors],
  };
}
