import type { Deps } from '../deps.js';
import { parseFilters } from '../analysis/filters.js';
import { buildExportCsv } from '../export/build.js';
import { nextSlot, scheduledFileName, scheduleStore, slotLockKey, slotStart, storeName, type ExportSchedule } from '../export/schedule-store.js';
import { getProject, type Project } from '../projects/store.js';
import { deliverWebhook, type Fetch } from './webhook.js';
import { webhookPolicy } from './webhook-target.js';
import { logError } from '../log.js';

/** Schedules handled per tick; the rest wait for the next tick (cron runs are time-boxed). */
const MAX_PER_TICK = 50;

export interface ExportRun {
  projectId: string;
  file: string;
  size: number;
  webhook?: { status: number } | { error: string };
}

async function collect(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}

async function runOne(deps: Deps, project: Project, schedule: ExportSchedule, slot: number, now: number, fetchImpl?: Fetch): Promise<ExportRun | null> {
  const store = deps.exportStore!;
  // The same generator as GET …/export, run as the owner would see it. Without the answer cache: a
  // scheduled export is no viewer, so its questions are neither reused nor kept fresh afterwards.
  const csv = await collect(buildExportCsv({ deps: { ...deps, answers: undefined }, project, role: 'owner' }, {
    period: schedule.period,
    limit: schedule.limit,
    filters: parseFilters(schedule.filters ?? ''),
  }));
  const file = scheduledFileName(project.domain, schedule.period, slot);
  await store.put(storeName(project.id, file), csv);
  // Deleted while the CSV was built: its folder was emptied before this file landed.
  if (!(await getProject(deps.redis, project.id))) {
    await store.removeAll(storeName(project.id, ''));
    return null;
  }
  await scheduleStore.completed(deps.redis, project.id, { slot, file, now });
  const run: ExportRun = { projectId: project.id, file, size: new TextEncoder().encode(csv).length };
  if (schedule.webhookUrl) {
    const path = `/api/v1/projects/${encodeURIComponent(project.domain)}/exports/${encodeURIComponent(file)}`;
    run.webhook = await deliverWebhook(
      schedule.webhookUrl,
      schedule.secret,
      {
        type: 'export.ready',
        domain: project.domain,
        period: schedule.period,
        frequency: schedule.frequency,
        file,
        size: run.size,
        slot: new Date(slot).toISOString(),
        generatedAt: new Date(now).toISOString(),
        downloadPath: path,
        downloadUrl: deps.config.PUBLIC_URL ? new URL(path, deps.config.PUBLIC_URL).toString() : null,
      },
      { policy: webhookPolicy(deps), fetch: fetchImpl ?? deps.webhookFetch },
    );
    await scheduleStore.recordWebhook(deps.redis, project.id, run.webhook);
    if ('error' in run.webhook) logError(`[sightline] webhook of ${project.domain}'s export not delivered: ${run.webhook.error}`);
  }
  return run;
}

/**
 * Runs one project's schedule if it is due at `now` (the cron calls it for every due project;
 * tests call it for their own). A schedule that missed several slots (the cron was down) runs
 * once, for the current slot, then moves to the next boundary. A slot runs at most once: its
 * lock (SET NX PX until the next boundary) is taken before the work, kept after success and
 * released after a failure so the next tick retries. Resolves with the run, null when nothing
 * ran, or throws the failure.
 */
export async function runDueExport(deps: Deps, projectId: string, now: number, opts: { fetch?: Fetch } = {}): Promise<ExportRun | null> {
  const { redis } = deps;
  if (!deps.exportStore) return null;
  const schedule = await scheduleStore.get(redis, projectId);
  const project = schedule ? await getProject(redis, projectId) : null;
  if (!schedule || !project) {
    await scheduleStore.forget(redis, projectId);
    return null;
  }
  if (schedule.nextRunAt > now) {
    // Not due (the due set said otherwise, or the caller asked early): keep the set in step with the record.
    await scheduleStore.skipTo(redis, projectId, schedule.nextRunAt);
    return null;
  }
  const slot = slotStart(schedule.frequency, now);
  const next = nextSlot(schedule.frequency, now);
  if (schedule.lastSlot === slot) {
    await scheduleStore.skipTo(redis, projectId, next);
    return null;
  }
  const lock = slotLockKey(projectId, slot);
  if ((await redis.set(lock, now, { nx: true, px: Math.max(next - now, 1000) + 3_600_000 })) !== 'OK') return null;
  try {
    return await runOne(deps, project, schedule, slot, now, opts.fetch);
  } catch (err) {
    await redis.del(lock);
    throw new Error(`export of ${project.domain} failed: ${(err as Error).message}`);
  }
}

/** Runs every export schedule due at `now` (at most MAX_PER_TICK; the rest wait for the next tick). */
export async function runDueExports(deps: Deps, now: number, opts: { fetch?: Fetch } = {}): Promise<{ runs: ExportRun[]; errors: string[] }> {
  const runs: ExportRun[] = [];
  const errors: string[] = [];
  if (!deps.exportStore) return { runs, errors };
  for (const projectId of await scheduleStore.due(deps.redis, now, MAX_PER_TICK)) {
    try {
      const run = await runDueExport(deps, projectId, now, opts);
      if (run) runs.push(run);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return { runs, errors };
}
