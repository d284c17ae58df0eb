import type { Deps } from '../deps.js';
import { runScheduledJobs, type JobOptions } from './scheduled.js';
import { logError } from '../log.js';
import { waitAtMost } from '../adapters/wait-at-most.js';

/**
 * The Node counterpart of the Workers cron trigger: runs the periodic jobs every `intervalMs`
 * (60 s). Ticks never overlap; the timer is unref'd so it never keeps the process alive, and
 * `stop(waitMs)` waits for a running tick, at most `waitMs`: a job stuck on a hung ClickHouse must
 * not hold a shutdown, and every job is idempotent and locked per slot, so one cut short is run
 * again by the next process. The jobs lock in Redis, so several processes may run this.
 */
export function startScheduler(deps: Deps, opts: { intervalMs?: number; jobs?: JobOptions } = {}): { stop(waitMs?: number): Promise<void> } {
  let running: Promise<void> | null = null;
  const tick = () => {
    if (running) return;
    running = runScheduledJobs(deps, deps.clock.now(), opts.jobs)
      .then((summary) => {
        for (const e of summary.errors) logError(`[sightline] scheduled job: ${e}`);
      })
      .catch((err) => logError('[sightline] scheduled jobs failed', err))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, opts.intervalMs ?? 60_000);
  timer.unref();
  // At start too: a process that was down catches up its missed slot now, not a minute later.
  tick();
  return {
    async stop(waitMs = Number.POSITIVE_INFINITY) {
      clearInterval(timer);
      if (running) await waitAtMost(running, waitMs);
    },
  };
}
