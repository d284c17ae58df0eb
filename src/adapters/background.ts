import { logError } from '../log.js';

/**
 * Work a request starts and does not wait for (src/analysis/closed-hours.ts: a part of closed hours
 * summed after its question was answered by the whole pass). One task per key at a time: a key
 * still running is not started again. A failure is logged, never thrown.
 */
export interface Background {
  run(key: string, task: () => Promise<unknown>): void;
  /** Resolves when every task started so far (and any they started) has ended: shutdown waits for it, tests too. */
  settled(): Promise<void>;
}

/** Background tasks of this process (Node); Workers have none, so such work runs before the answer there. */
export function backgroundTasks(): Background {
  const running = new Map<string, Promise<void>>();
  return {
    run(key, task) {
      if (running.has(key)) return;
      const done = Promise.resolve()
        .then(task)
        .then(
          () => {},
          (err: unknown) => logError(`background task failed: ${key}`, err),
        )
        .finally(() => running.delete(key));
      running.set(key, done);
    },
    async settled() {
      while (running.size) await Promise.all(running.values());
    },
  };
}
