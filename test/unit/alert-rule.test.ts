import { describe, expect, it } from 'vitest';
import { decide } from '../../src/notify/alert-rule.js';
import type { AlertState } from '../../src/notify/alert-store.js';

const H = 3_600_000;

/** Runs the rule over a sequence of (time in hours, condition) and returns when it fired. */
function firings(cooldownHours: number, steps: [number, boolean][]): number[] {
  let state: AlertState | null = null;
  const out: number[] = [];
  for (const [hour, holds] of steps) {
    const r = decide(state, holds, hour * H, cooldownHours);
    if (r.fire) out.push(hour);
    state = r.state;
  }
  return out;
}

describe('alert firing rule', () => {
  it('fires the first time the condition holds', () => {
    expect(firings(12, [[0, false], [1, true], [2, true]])).toEqual([1]);
  });

  it('never fires twice while the condition simply stays true, however long', () => {
    expect(firings(1, [[0, true], [5, true], [50, true], [500, true]])).toEqual([0]);
  });

  it('needs the cooldown: a clear and return inside it stays quiet', () => {
    expect(firings(12, [[0, true], [1, false], [2, true], [11, true]])).toEqual([0]);
  });

  it('fires again after cooldown once the condition cleared and returned, in either order', () => {
    expect(firings(12, [[0, true], [1, false], [2, true], [12, true]])).toEqual([0, 12]);
    expect(firings(12, [[0, true], [13, false], [14, true]])).toEqual([0, 14]);
  });
});
