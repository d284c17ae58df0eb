import { afterEach, describe, expect, it, vi } from 'vitest';
import { backgroundTasks } from '../../src/adapters/background.js';

afterEach(() => vi.restoreAllMocks());

describe('background tasks', () => {
  it('run one task per key at a time; a key is free again once its task ended', async () => {
    const bg = backgroundTasks();
    let release = () => {};
    const started: string[] = [];
    bg.run('a', () => (started.push('a1'), new Promise<void>((r) => (release = r))));
    bg.run('a', async () => started.push('a2'));
    bg.run('b', async () => started.push('b1'));
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual(['a1', 'b1']);
    release();
    await bg.settled();
    bg.run('a', async () => started.push('a3'));
    await bg.settled();
    expect(started).toEqual(['a1', 'b1', 'a3']);
  });

  it('log a failure instead of throwing it, and settle after tasks that tasks started', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const bg = backgroundTasks();
    const done: string[] = [];
    bg.run('fails', async () => {
      throw new Error('engine refused');
    });
    bg.run('outer', async () => {
      await new Promise((r) => setTimeout(r, 5));
      bg.run('inner', async () => {
        await new Promise((r) => setTimeout(r, 5));
        done.push('inner');
      });
    });
    await bg.settled();
    expect(done).toEqual(['inner']);
    expect(logged.mock.calls.flat().join('\n')).toMatch(/background task failed: fails[\s\S]*engine refused/);
  });

  it('start a task given `after` once it has settled, answered or failed, and hold its key meanwhile', async () => {
    const bg = backgroundTasks();
    const started: string[] = [];
    let answer = () => {};
    let fail = () => {};
    bg.run('a', async () => started.push('a'), new Promise<void>((r) => (answer = r)));
    bg.run('a', async () => started.push('a again'));
    bg.run('b', async () => started.push('b'), new Promise<void>((_, reject) => (fail = () => reject(new Error('no answer')))));
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([]);
    answer();
    fail();
    await bg.settled();
    expect(started.sort()).toEqual(['a', 'b']);
  });

  it('hand each task they start to keepAlive (a Worker’s waitUntil), never one they skip, settled whatever the task did', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const kept: Promise<void>[] = [];
    const bg = backgroundTasks((task) => kept.push(task));
    bg.run('a', () => new Promise((r) => setTimeout(r, 5)));
    bg.run('a', async () => {});
    bg.run('b', async () => {
      throw new Error('engine refused');
    });
    expect(kept).toHaveLength(2);
    await expect(Promise.all(kept)).resolves.toEqual([undefined, undefined]);
  });
});
