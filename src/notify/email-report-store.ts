import type { Redis } from '@upstash/redis';
import { ProjectKeys } from '../projects/store.js';
import { nextReportSlot, type ReportFrequency } from './report-periods.js';

/** One project's email report settings, under `ProjectKeys.emailReport(id)`; recipients live in their own set. */
export interface EmailReport {
  frequency: ReportFrequency;
  /** `{base}` of the links in the email (PUBLIC_URL, else the origin the report was set up from). */
  baseUrl: string;
  createdAt: string;
  updatedAt: string;
  /** Epoch ms of the next send time (Monday or the 1st, 08:00 in the project's zone). */
  nextRunAt: number;
  /** Slot of the last scheduled send, so a slot is never sent twice. */
  lastSlot: number | null;
  lastSentAt: string | null;
  lastResult: { sent: number; failed: number } | null;
}

/** Sorted set of project ids by their report's next send time: the jobs read what is due. */
export const REPORTS_DUE_KEY = 'email-reports:due';
/** Run lock of one report slot: SET NX makes a slot go out at most once across processes. */
export const reportLockKey = (projectId: string, slot: number) => `email-report:lock:${projectId}:${slot}`;

export const emailReportStore = {
  async get(redis: Redis, projectId: string): Promise<{ report: EmailReport; recipients: string[] } | null> {
    const [report, recipients] = await redis
      .pipeline()
      .get<EmailReport>(ProjectKeys.emailReport(projectId))
      .smembers<string[]>(ProjectKeys.emailRecipients(projectId))
      .exec<[EmailReport | null, string[]]>();
    return report ? { report, recipients: recipients.map(String).sort() } : null;
  },

  /** Creates or replaces the settings and the recipient list; the next send is recomputed in `timeZone`. */
  async put(
    redis: Redis,
    projectId: string,
    input: { frequency: ReportFrequency; recipients: string[]; baseUrl: string },
    timeZone: string,
    now: number,
  ): Promise<{ report: EmailReport; created: boolean }> {
    const previous = await redis.get<EmailReport>(ProjectKeys.emailReport(projectId));
    const at = new Date(now).toISOString();
    const report: EmailReport = {
      frequency: input.frequency,
      baseUrl: input.baseUrl,
      createdAt: previous?.createdAt ?? at,
      updatedAt: at,
      nextRunAt: nextReportSlot(input.frequency, timeZone, now),
      // A changed frequency starts over; the same one keeps its record of what was sent.
      lastSlot: previous?.frequency === input.frequency ? previous.lastSlot : null,
      lastSentAt: previous?.lastSentAt ?? null,
      lastResult: previous?.lastResult ?? null,
    };
    const tx = redis.multi();
    tx.set(ProjectKeys.emailReport(projectId), report);
    tx.del(ProjectKeys.emailRecipients(projectId));
    tx.sadd(ProjectKeys.emailRecipients(projectId), input.recipients[0]!, ...input.recipients.slice(1));
    tx.zadd(REPORTS_DUE_KEY, { score: report.nextRunAt, member: projectId });
    await tx.exec();
    return { report, created: !previous };
  },

  async remove(redis: Redis, projectId: string): Promise<boolean> {
    const [removed] = await redis
      .multi()
      .del(ProjectKeys.emailReport(projectId))
      .del(ProjectKeys.emailRecipients(projectId))
      .zrem(REPORTS_DUE_KEY, projectId)
      .exec<[number, number, number]>();
    return removed > 0;
  },

  /** Removes one recipient (an unsubscribe); true when it was on the list. */
  async removeRecipient(redis: Redis, projectId: string, email: string): Promise<boolean> {
    return (await redis.srem(ProjectKeys.emailRecipients(projectId), email)) > 0;
  },

  async due(redis: Redis, now: number, count: number): Promise<string[]> {
    return (await redis.zrange<string[]>(REPORTS_DUE_KEY, 0, now, { byScore: true, offset: 0, count })).map(String);
  },

  /** Of `projectIds`, those whose report is due at `now` (a run scoped to some projects). */
  async dueAmong(redis: Redis, now: number, projectIds: string[]): Promise<string[]> {
    const scores = await Promise.all(projectIds.map((id) => redis.zscore(REPORTS_DUE_KEY, id)));
    return projectIds.filter((_, i) => scores[i] !== null && Number(scores[i]) <= now);
  },

  /** Records a scheduled send and moves the report to its next send time (XX: a report deleted meanwhile stays deleted). */
  async completed(redis: Redis, projectId: string, run: { slot: number; next: number; now: number; sent: number; failed: number }): Promise<void> {
    const current = await redis.get<EmailReport>(ProjectKeys.emailReport(projectId));
    if (!current) return;
    const updated: EmailReport = { ...current, nextRunAt: run.next, lastSlot: run.slot, lastSentAt: new Date(run.now).toISOString(), lastResult: { sent: run.sent, failed: run.failed } };
    await redis.set(ProjectKeys.emailReport(projectId), updated, { xx: true });
    await redis.zadd(REPORTS_DUE_KEY, { xx: true }, { score: run.next, member: projectId });
  },

  async skipTo(redis: Redis, projectId: string, next: number): Promise<void> {
    await redis.zadd(REPORTS_DUE_KEY, { xx: true }, { score: next, member: projectId });
  },

  async forget(redis: Redis, projectId: string): Promise<void> {
    await redis.zrem(REPORTS_DUE_KEY, projectId);
  },
};
