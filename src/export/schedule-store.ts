import type { Redis } from '@upstash/redis';
import { ProjectKeys } from '../projects/store.js';
import { exportFileName } from './routes.js';
import type { PeriodKey } from '../reports/periods.js';

export const FREQUENCIES = ['daily', 'weekly', 'monthly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

/** One project's export schedule as stored in Redis under `ProjectKeys.exportSchedule(id)`. */
export interface ExportSchedule {
  frequency: Frequency;
  period: PeriodKey;
  /** Rows per ranked section, as the export route's `limit`. */
  limit: number;
  /** `filters` text (the reports' grammar) every run applies; '' or absent (older records) for none. */
  filters?: string;
  webhookUrl: string | null;
  /** HMAC key of the webhook signature; shown to the caller once, when made. */
  secret: string;
  createdAt: string;
  updatedAt: string;
  /** Epoch ms of the next slot boundary at which the export is due. */
  nextRunAt: number;
  lastRunAt: string | null;
  lastFile: string | null;
  /** Slot (epoch ms of its boundary) of the last completed run. */
  lastSlot: number | null;
  /** What the last run's webhook got: the receiver's status, or why it was not delivered (absent in older records). */
  lastWebhook?: { status: number } | { error: string } | null;
}

/** Sorted set of project ids scored by their schedule's next run time: the cron reads what is due. */
export const DUE_KEY = 'export-schedules:due';

/** Redis key of the run lock of one schedule slot: SET NX makes a slot run at most once. */
export const slotLockKey = (projectId: string, slot: number) => `export-schedule:lock:${projectId}:${slot}`;

const DAY = 86_400_000;

/**
 * The latest slot boundary at or before `now`, in UTC: midnight (daily), Monday midnight
 * (weekly), the 1st at midnight (monthly). A slot is named by its boundary.
 */
export function slotStart(frequency: Frequency, now: number): number {
  const d = new Date(now);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (frequency === 'daily') return midnight;
  if (frequency === 'weekly') return midnight - ((d.getUTCDay() + 6) % 7) * DAY;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The first slot boundary strictly after `now`. */
export function nextSlot(frequency: Frequency, now: number): number {
  const start = slotStart(frequency, now);
  if (frequency === 'daily') return start + DAY;
  if (frequency === 'weekly') return start + 7 * DAY;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Stored file name of one run: the export's own name plus the slot's UTC date. */
export function scheduledFileName(domain: string, period: string, slot: number): string {
  return exportFileName(domain, period).replace(/\.csv$/, `-${new Date(slot).toISOString().slice(0, 10)}.csv`);
}

/** Name in the export store: one folder per project id. */
export const storeName = (projectId: string, file: string) => `${projectId}/${file}`;

function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

export type ScheduleInput = Pick<ExportSchedule, 'frequency' | 'period' | 'limit' | 'filters' | 'webhookUrl'>;

/** Export schedules in Redis: the record plus its entry in the due set. */
export const scheduleStore = {
  async get(redis: Redis, projectId: string): Promise<ExportSchedule | null> {
    return (await redis.get<ExportSchedule>(ProjectKeys.exportSchedule(projectId))) ?? null;
  },

  /**
   * Creates or replaces the schedule; the first run is the next slot boundary after `now`.
   * The secret is kept across updates unless `rotateSecret`; `secretShown` says whether the
   * caller gets to see it (only when it was just made).
   */
  async put(
    redis: Redis,
    projectId: string,
    input: ScheduleInput & { rotateSecret?: boolean },
    now: number,
  ): Promise<{ schedule: ExportSchedule; created: boolean; secretShown: boolean }> {
    const key = ProjectKeys.exportSchedule(projectId);
    const at = new Date(now).toISOString();
    const fresh = (previous: ExportSchedule | null, secret: string): ExportSchedule => ({
      frequency: input.frequency,
      period: input.period,
      limit: input.limit,
      filters: input.filters ?? '',
      webhookUrl: input.webhookUrl,
      secret,
      createdAt: previous?.createdAt ?? at,
      updatedAt: at,
      nextRunAt: nextSlot(input.frequency, now),
      lastRunAt: previous?.lastRunAt ?? null,
      lastFile: previous?.lastFile ?? null,
      lastSlot: previous?.lastSlot ?? null,
    });
    let previous = await this.get(redis, projectId);
    if (!previous) {
      // NX: of two concurrent first PUTs one creates (and shows its secret), the other updates.
      const schedule = fresh(null, newSecret());
      if ((await redis.set(key, schedule, { nx: true })) === 'OK') {
        await redis.zadd(DUE_KEY, { score: schedule.nextRunAt, member: projectId });
        return { schedule, created: true, secretShown: true };
      }
      previous = await this.get(redis, projectId);
    }
    const rotate = input.rotateSecret === true || !previous;
    const schedule = fresh(previous, rotate || !previous ? newSecret() : previous.secret);
    await redis.set(key, schedule);
    await redis.zadd(DUE_KEY, { score: schedule.nextRunAt, member: projectId });
    return { schedule, created: false, secretShown: rotate };
  },

  async remove(redis: Redis, projectId: string): Promise<boolean> {
    const [removed] = await redis.multi().del(ProjectKeys.exportSchedule(projectId)).zrem(DUE_KEY, projectId).exec<[number, number]>();
    return removed > 0;
  },

  /** Project ids whose schedule is due at `now`, oldest first, at most `count`. */
  async due(redis: Redis, now: number, count: number): Promise<string[]> {
    return redis.zrange<string[]>(DUE_KEY, 0, now, { byScore: true, offset: 0, count });
  },

  /**
   * Records a finished run and moves the schedule to its next slot. XX on the due set: a
   * schedule deleted while it ran is not brought back.
   */
  async completed(redis: Redis, projectId: string, run: { slot: number; file: string; now: number }): Promise<void> {
    const current = await this.get(redis, projectId);
    if (!current) return;
    const next = nextSlot(current.frequency, run.now);
    await redis.set(ProjectKeys.exportSchedule(projectId), {
      ...current,
      nextRunAt: next,
      lastRunAt: new Date(run.now).toISOString(),
      lastFile: run.file,
      lastSlot: run.slot,
    }, { xx: true });
    await redis.zadd(DUE_KEY, { xx: true }, { score: next, member: projectId });
  },

  /** Records the outcome of the last run's webhook (XX: a schedule deleted meanwhile stays deleted). */
  async recordWebhook(redis: Redis, projectId: string, result: { status: number } | { error: string }): Promise<void> {
    const current = await this.get(redis, projectId);
    if (!current) return;
    await redis.set(ProjectKeys.exportSchedule(projectId), { ...current, lastWebhook: result }, { xx: true });
  },

  /** Moves a schedule to its next slot without running it (its slot was already done). */
  async skipTo(redis: Redis, projectId: string, next: number): Promise<void> {
    await redis.zadd(DUE_KEY, { xx: true }, { score: next, member: projectId });
  },

  /** Drops a due entry whose schedule no longer exists (e.g. its project was deleted). */
  async forget(redis: Redis, projectId: string): Promise<void> {
    await redis.zrem(DUE_KEY, projectId);
  },
};
