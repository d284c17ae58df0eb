import { describe, expect, it } from 'vitest';
import { memoizeBounded } from '../../src/ingest/enrich/memo.js';

describe('memoizeBounded', () => {
  it('computes a key once while it is remembered, including null answers', () => {
    const calls: string[] = [];
    const f = memoizeBounded((k) => (calls.push(k), k === 'none' ? null : k.toUpperCase()), 100);
    expect([f('a'), f('a'), f('none'), f('none'), f('b')]).toEqual(['A', 'A', null, null, 'B']);
    expect(calls).toEqual(['a', 'none', 'b']);
  });

  it('forgets keys not used lately and keeps recently used ones, holding at most maxEntries', () => {
    const calls: string[] = [];
    const f = memoizeBounded((k) => (calls.push(k), k), 4);
    for (const k of ['a', 'b', 'c', 'd']) f(k);
    f('a'); // used again: moves back to the young generation
    for (const k of ['e', 'f']) f(k);
    calls.length = 0;
    f('a');
    f('b');
    expect(calls).toEqual(['b']);
    // Never more than maxEntries distinct keys remembered: after 1000 keys, the first ones are recomputed.
    for (let i = 0; i < 1000; i++) f(`k${i}`);
    calls.length = 0;
    for (let i = 0; i < 10; i++) f(`k${i}`);
    expect(calls).toHaveLength(10);
  });
});
