import { logError } from '../log.js';
import { waitAtMost } from './wait-at-most.js';

/**
 * Work a request starts and does not wait for (src/analysis/closed-hours.ts: a part of closed hours
 * summed after its question was answered by the whole pass). One task per key at a time: a key
 * still running is not started again. A failure is logged, never thrown.
 */
export interface Background {
  /** Runs `task` under `key`, once `after` (the answer that asked for it) has settled, so the two do not share the cores. */
  run(key: string, task: () => Promise<unknown>, after?: Promise<unknown>): void;
  /**
   * Resolves when every task started so far (and any they started) has ended, or after `waitMs`:
   * tests wait for it, shutdown for a moment (tasks only keep caches, and one stuck on a hung
   * ClickHouse is left behind).
   */
  settled(waitMs?: number): Promise<void>;
}

/**
 * Background tasks of this process, one per key at a time. Node keeps them running by itself; a
 * Worker passes `keepAlive` (the current request's `waitUntil`), or the runtime may stop a task
 * once the answer is sent.
 */
export function backgroundTasks(keepAlive?: (task: Promise<void>) => void): Background {
  const running = new Map<string, Promise<void>>();
  return {
    run(key, task, after) {
      if (running.has(key)) return;
      const done = (after ?? Promise.resolve())
        .then(task, task)
        .then(
          () => {},
          (err: unknown) => logError(`background task failed: ${key}`, err),
        )
        .finally(() => running.delete(key));
      running.set(key, done);
      keepAlive?.(done);
    },
    async settled(waitMs = Number.POSITIVE_INFINITY) {
      const all = async () => {
        while (running.size) await Promise.all(running.values());
      };
      await waitAtMost(all(), waitMs);
    },
  };
}
