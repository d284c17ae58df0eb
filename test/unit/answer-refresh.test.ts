import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { AnswerRefresher } from '../../src/reports/answer-refresh.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('AnswerRefresher pacing', () => {
  it('rests after a pass as long as the pass took, so refreshing takes at most half the time', async () => {
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
    // Written again while the first pass runs: a second pass follows, after the rest.
    refresher.written(['p']);
    await refresher.settled();
    expect(passes).toHaveLength(2);
    expect(passes[1]!.start - passes[0]!.end).toBeGreaterThanOrEqual(110);
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
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    const ran: string[] = [];
    let began!: () => void;
    const firstBegan = new Promise<void>((resolve) => (began = resolve));
    refresher.watch('a', 'p', async () => void ran.push('a'));
    refresher.watch('b', 'p', async () => {
      began();
      await sleep(80);
      ran.push('b');
    });
    refresher.written(['p']);
    await firstBegan;
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
