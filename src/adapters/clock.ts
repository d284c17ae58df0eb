/** The app's source of time, injected so tests can pin it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that stays where it is set; for tests. */
export function fixedClock(start: number): Clock & { set(ms: number): void; advance(ms: number): void } {
  let t = start;
  return { now: () => t, set: (ms) => { t = ms; }, advance: (ms) => { t += ms; } };
}
