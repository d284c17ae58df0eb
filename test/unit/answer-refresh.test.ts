import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { AnswerRefresher } from '../../src/reports/answer-refresh.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A refresher of project `p` watching `quick` questions (each records its key when refreshed), then
 * `slow`, the newest, which records its key `ms` after it starts; `slowBegan` resolves as it starts.
 */
function watchingSlowNewest(quick: string[], slow: string, ms: number) {
  const refresher = new AnswerRefresher({ watchMs: 60_000, clock: fixedClock(0) });
  const ran: string[] = [];
  let began!: () => void;
  const slowBegan = new Promise<void>((resolve) => (began = resolve));
  for (const key of quick) refresher.watch(key, 'p', async () => void ran.push(key));
  refresher.watch(slow, 'p', async () => {
    began();
    await sleep(ms);
    ran.push(slow);
  });
  return { refresher, ran, slowBegan };
}

describe('AnswerRefresher pacing', () => {
  it('rests after a slice as long as the slice took, so refreshing takes at most half the time', async () => {
    const clock = fixedClock(1_000_000);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    const passes: { start: number; end: number }[] = [];
    let began!: () => void;
    const firstBegan = new Promise<void>((resolve) => (began = resolve));
    refresher.watch('q', 'p', async () => {
      const start = performance.now();
      began();
      await sleep(120);
      passes.push({ start, end: performance.now() });
    });
    refresher.written(['p']);
    await firstBegan;
    // Written again while the first slice runs: a new round follows, after the rest.
    refresher.written(['p']);
    await refresher.settled();
    expect(passes).toHaveLength(2);
    expect(passes[1]!.start - passes[0]!.end).toBeGreaterThanOrEqual(110);
  });

  it('works a round longer than a slice in slices, each followed by a rest as long, and goes on where it stopped', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock, sliceMs: 100 });
    const runs: { key: string; start: number; end: number }[] = [];
    for (const key of ['q1', 'q2', 'q3', 'q4']) {
      refresher.watch(key, 'p', async () => {
        const start = performance.now();
        await sleep(60);
        runs.push({ key, start, end: performance.now() });
      });
    }
    refresher.written(['p']);
    await refresher.settled();
    // Most recently asked first; the slice ends once 100 ms have gone (after two 60 ms questions).
    expect(runs.map((r) => r.key)).toEqual(['q4', 'q3', 'q2', 'q1']);
    expect(runs[1]!.start - runs[0]!.end).toBeLessThan(50);
    expect(runs[2]!.start - runs[1]!.end).toBeGreaterThanOrEqual(110);
    expect(runs[3]!.start - runs[2]!.end).toBeLessThan(50);
  });

  it('starts the round again from the most recently asked question when the project is written during it', async () => {
    const { refresher, ran, slowBegan } = watchingSlowNewest(['a', 'b'], 'c', 60);
    refresher.written(['p']);
    await slowBegan;
    // The answers of the older round's remaining questions would be computed at the newer version
    // anyway; the newest question comes first again, so what is looked at now is fresh soonest.
    refresher.written(['p']);
    await refresher.settled();
    expect(ran).toEqual(['c', 'c', 'b', 'a']);
  });

  it('watches at most maxWatched questions, the least recently asked going first', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, maxWatched: 2, clock });
    const ran: string[] = [];
    for (const key of ['a', 'b', 'c']) refresher.watch(key, 'p', async () => void ran.push(key));
    refresher.written('all');
    await refresher.settled();
    expect(ran.sort()).toEqual(['b', 'c']);
  });

  it('refreshes nothing once closed', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    let ran = 0;
    refresher.watch('a', 'p', async () => void ran++);
    await refresher.close();
    refresher.written(['p']);
    await refresher.settled();
    expect(ran).toBe(0);
  });
});

describe('AnswerRefresher and writes in a row', () => {
  it('starts a pass only once writes have paused (an import refreshed once, after its last block)', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    const starts: number[] = [];
    refresher.watch('q', 'p', async () => void starts.push(performance.now()));
    let lastWrite = 0;
    for (let i = 0; i < 8; i++) {
      refresher.written(['p']);
      lastWrite = performance.now();
      await sleep(50);
    }
    await refresher.settled();
    expect(starts).toHaveLength(1);
    expect(starts[0]! - lastWrite).toBeGreaterThanOrEqual(150);
  });

  it('closing cuts a wait short', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    refresher.watch('q', 'p', async () => {});
    refresher.written(['p']);
    const t = performance.now();
    await refresher.close();
    expect(performance.now() - t).toBeLessThan(100);
  });
});

describe('AnswerRefresher.current', () => {
  it('resolves when the question in progress is answered; with a user question held, none starts after it', async () => {
    const { refresher, ran, slowBegan } = watchingSlowNewest(['a'], 'b', 80);
    refresher.written(['p']);
    await slowBegan;
    const hold = refresher.userQuestion();
    await refresher.current();
    expect(ran).toEqual(['b']);
    await sleep(300);
    expect(ran).toEqual(['b']);
    hold();
    await refresher.settled();
    expect(ran).toEqual(['b', 'a']);
  });
});
