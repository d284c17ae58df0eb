import type { Deps } from '../deps.js';
import { emailReportStore, reportLockKey } from '../notify/email-report-store.js';
import { completedSpan, nextReportSlot, reportSlot } from '../notify/report-periods.js';
import { sendReport } from '../notify/report-send.js';
import { getProject } from '../projects/store.js';

/** Reports handled per run; the rest wait for the next run (cron runs are time-boxed). */
const MAX_PER_TICK = 20;

export interface EmailReportRun {
  projectId: string;
  slot: number;
  sent: number;
  failed: number;
}

/**
 * Sends every email report due at `now`: the last whole week or month before its slot (Monday
 * or the 1st, 08:00 in the project's zone). As with scheduled exports, a report that missed
 * several slots while nothing ran is sent once, for the latest slot, and a slot is sent at most
 * once: its lock (SET NX until past the next slot) is taken before sending, kept afterwards, and
 * released only when the report could not be built, so the next run tries again. Recipients that
 * fail after retries are logged (send.ts) and counted in `lastResult`; the slot still counts as
 * sent, so the others never get it twice. Without a mailer nothing is sent and due reports wait.
 */
export async function runDueEmailReports(
  deps: Deps,
  now: number,
  opts: { delaysMs?: readonly number[]; onlyProjects?: ReadonlySet<string> } = {},
): Promise<{ runs: EmailReportRun[]; errors: string[] }> {
  const runs: EmailReportRun[] = [];
  const errors: string[] = [];
  const mailer = deps.mailer;
  if (!mailer) return { runs, errors };
  const { redis } = deps;
  const due = opts.onlyProjects ? await emailReportStore.dueAmong(redis, now, [...opts.onlyProjects]) : await emailReportStore.due(redis, now, MAX_PER_TICK);
  for (const projectId of due) {
    const [found, project] = await Promise.all([emailReportStore.get(redis, projectId), getProject(redis, projectId)]);
    if (!found || !project) {
      await emailReportStore.forget(redis, projectId);
      continue;
    }
    const { frequency } = found.report;
    const slot = reportSlot(frequency, project.timeZone, now);
    const next = nextReportSlot(frequency, project.timeZone, now);
    if (found.report.lastSlot === slot) {
      await emailReportStore.skipTo(redis, projectId, next);
      continue;
    }
    const lock = reportLockKey(projectId, slot);
    if ((await redis.set(lock, now, { nx: true, px: Math.max(next - now, 1000) + 3_600_000 })) !== 'OK') continue;
    try {
      const result = await sendReport({ ...deps, mailer }, project, {
        frequency,
        recipients: found.recipients,
        span: completedSpan(frequency, project.timeZone, slot),
        base: deps.config.PUBLIC_URL ?? found.report.baseUrl,
      }, opts);
      await emailReportStore.completed(redis, projectId, { slot, next, now, sent: result.sent.length, failed: result.failed.length });
      runs.push({ projectId, slot, sent: result.sent.length, failed: result.failed.length });
      if (result.failed.length > 0) errors.push(`email report of ${project.domain}: ${result.failed.length} recipient(s) failed`);
    } catch (err) {
      await redis.del(lock);
      errors.push(`email report of ${project.domain} failed: ${(err as Error).message}`);
    }
  }
  return { runs, errors };
}
