/**
 * The API's sliding windows are aligned to multiples of the window length since the epoch
 * (`@upstash/ratelimit`'s slidingWindow). Requests that straddle a boundary see the previous
 * window's count weighted down, so a slot can come free between two of them; a test that counts
 * slots must make its requests inside one window.
 */
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits for the start of the next window (plus 20 ms), so all that follows has a whole window. */
export function nextWindowStart(windowSeconds: number): Promise<void> {
  const windowMs = windowSeconds * 1000;
  return sleep(windowMs - (Date.now() % windowMs) + 20);
}

/** Returns at once when `neededMs` remain in the current window, else waits for the next one. */
export async function windowWithRoom(windowSeconds: number, neededMs: number): Promise<void> {
  const windowMs = windowSeconds * 1000;
  if (windowMs - (Date.now() % windowMs) < neededMs) await nextWindowStart(windowSeconds);
}
