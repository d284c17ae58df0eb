/** Runs `run` after the event loop's pending I/O callbacks: setImmediate on Node, a timer elsewhere. */
export const afterIo: (run: () => void) => unknown = typeof setImmediate === 'function' ? setImmediate : (run) => setTimeout(run, 0);

/**
 * Calls `onTimeout` once `ms` have passed and one more pass of the event loop's I/O has run, unless
 * cancelled first; returns the cancel. Timers run before the loop reads its sockets: after the
 * loop was held longer than `ms` (a long synchronous task, a starved host) an answer may be
 * waiting unread, and it gets that pass to arrive before the wait counts as timed out.
 */
export function timeoutAfterIo(ms: number, onTimeout: () => void): () => void {
  let cancelled = false;
  const timer = setTimeout(() => afterIo(() => cancelled || onTimeout()), ms);
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}

/**
 * `work`'s outcome, or `onTimeout()`'s (its value, or what it throws) once `ms` have passed and the
 * loop has read its sockets once more (timeoutAfterIo). `work` is not cancelled.
 */
export async function withinTime<T>(work: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let cancel = () => {};
  const timedOut = new Promise<T>((resolve, reject) => {
    cancel = timeoutAfterIo(ms, () => {
      try {
        resolve(onTimeout());
      } catch (err) {
        reject(err);
      }
    });
  });
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    cancel();
  }
}
