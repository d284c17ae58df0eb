import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import { AnswerRefresher } from '../../src/reports/answer-refresh.js';
import { runAsUserQuestion } from '../../src/reports/answer-cache.js';
import type { Deps } from '../../src/deps.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Further apart than questions refreshed together (a dashboard's requests, asked within two seconds). */
const APART_MS = 3000;

/**
 * A refresher of project `p` watching `quick` questions (each records its key when refreshed), then
 * `slow`, the newest, which records its key `ms` after it starts; `slowBegan` resolves as it starts.
 * Each is asked APART_MS after the one before, so each is refreshed on its own.
 */
function watchingSlowNewest(quick: string[], slow: string, ms: number) {
  const clock = fixedClock(0);
  const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
  const ran: string[] = [];
  let began!: () => void;
  const slowBegan = new Promise<void>((resolve) => (began = resolve));
  for (const key of quick) {
    refresher.watch(key, 'p', async () => void ran.push(key));
    clock.advance(APART_MS);
  }
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
      clock.advance(APART_MS);
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

describe('AnswerRefresher and questions asked together', () => {
  it('refreshes the questions asked within two seconds of each other at once (their reads go as one statement), at most 16', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    const runs: { key: string; start: number; end: number }[] = [];
    const watch = (key: string) =>
      refresher.watch(key, 'p', async () => {
        const start = performance.now();
        await sleep(40);
        runs.push({ key, start, end: performance.now() });
      });
    // An older question on its own, then a dashboard of 18 requests asked over 1.7 s.
    watch('old');
    clock.advance(APART_MS);
    for (let i = 0; i < 18; i++) {
      watch(`d${i}`);
      clock.advance(100);
    }
    refresher.written(['p']);
    await refresher.settled();
    const startOf = (key: string) => runs.find((r) => r.key === key)!.start;
    const endOf = (key: string) => runs.find((r) => r.key === key)!.end;
    // The newest 16 together, then the two left of the dashboard, then the older question.
    const first = Array.from({ length: 16 }, (_, i) => `d${17 - i}`);
    for (const key of first) expect(startOf(key) - startOf('d17')).toBeLessThan(20);
    expect(Math.max(...first.map(endOf))).toBeLessThanOrEqual(startOf('d1') + 1);
    expect(Math.abs(startOf('d1') - startOf('d0'))).toBeLessThan(20);
    expect(startOf('old')).toBeGreaterThanOrEqual(Math.max(endOf('d1'), endOf('d0')) - 1);
    expect(runs).toHaveLength(19);
  });

  it('refreshes them one at a time after writes in a row, so a question asked meanwhile waits for one at most', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    const runs: { key: string; start: number; end: number }[] = [];
    for (const key of ['a', 'b', 'c', 'd'])
      refresher.watch(key, 'p', async () => {
        const start = performance.now();
        await sleep(30);
        runs.push({ key, start, end: performance.now() });
      });
    // A write alone: its round goes together at once. Another right after it: that round, after the pause, one at a time.
    refresher.written(['p']);
    refresher.written(['p']);
    await refresher.settled();
    expect(runs).toHaveLength(8);
    const [grouped, single] = [runs.slice(0, 4), runs.slice(4)];
    expect(Math.max(...grouped.map((r) => r.start)) - Math.min(...grouped.map((r) => r.start))).toBeLessThan(20);
    expect(single.map((r) => r.key)).toEqual(['d', 'c', 'b', 'a']);
    for (let i = 1; i < single.length; i++) expect(single[i]!.start).toBeGreaterThanOrEqual(single[i - 1]!.end - 1);
  });

  it('counts each question of a group as refreshed or failed, and stops watching the failed one', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    let asked = 0;
    refresher.watch('ok', 'p', async () => void asked++);
    refresher.watch('broken', 'p', async () => {
      asked++;
      throw new Error('engine refused');
    });
    refresher.written(['p']);
    await refresher.settled();
    expect([asked, refresher.counts, refresher.watching]).toEqual([2, { refreshed: 1, failed: 1 }, 1]);
    refresher.written(['p']);
    await refresher.settled();
    expect([asked, refresher.counts]).toEqual([3, { refreshed: 2, failed: 1 }]);
  });
});

describe('AnswerRefresher and writes in a row', () => {
  it('starts a pass at once after a write alone, and only once writes in a row have paused (an import: at its first block and after its last)', async () => {
    const clock = fixedClock(0);
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock });
    const starts: number[] = [];
    refresher.watch('q', 'p', async () => void starts.push(performance.now()));
    const firstWrite = performance.now();
    let lastWrite = 0;
    for (let i = 0; i < 8; i++) {
      refresher.written(['p']);
      lastWrite = performance.now();
      await sleep(50);
    }
    await refresher.settled();
    expect(starts).toHaveLength(2);
    expect(starts[0]! - firstWrite).toBeLessThan(40);
    expect(starts[1]! - lastWrite).toBeGreaterThanOrEqual(150);
    // A second later, a write alone again: refreshed at once.
    await sleep(1100);
    const alone = performance.now();
    refresher.written(['p']);
    await refresher.settled();
    expect(starts).toHaveLength(3);
    expect(starts[2]! - alone).toBeLessThan(40);
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

describe('runAsUserQuestion', () => {
  it('holds refreshes while an answer the cache never keeps is computed (realtime)', async () => {
    const refresher = new AnswerRefresher({ watchMs: 60_000, clock: fixedClock(0) });
    const ran: string[] = [];
    refresher.watch('q', 'p', async () => void ran.push('q'));
    let finish!: () => void;
    const realtime = runAsUserQuestion(async (_ctx: { deps: Pick<Deps, 'answers'> }, _input: unknown) => {
      await new Promise<void>((resolve) => (finish = resolve));
      return 'realtime';
    });
    const answer = realtime({ deps: { answers: { refresher } as unknown as Deps['answers'] } }, {});
    // A write alone is refreshed at once, unless a user's question is being answered.
    refresher.written(['p']);
    await sleep(300);
    expect(ran).toEqual([]);
    finish();
    expect(await answer).toBe('realtime');
    await refresher.settled();
    expect(ran).toEqual(['q']);
  });
});
