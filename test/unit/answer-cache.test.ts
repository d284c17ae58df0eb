import { describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/adapters/clock.js';
import type { DataVersions } from '../../src/adapters/data-version.js';
import type { Deps } from '../../src/deps.js';
import type { Project } from '../../src/projects/store.js';
import { AnswerCache } from '../../src/reports/answer-cache.js';
import { fakeDataVersions } from '../helpers/fake-data-versions.js';

const project: Project = {
  id: 'prj_unit00000000000000', name: 'Unit', domain: 'unit.example', timeZone: 'UTC', publicStatsEnabled: false,
  brandColor: null, icon: null, createdAt: '2026-01-01T00:00:00.000Z', ownerId: 'acc_x',
};

/** Deps with a clock and a ClickHouse that answers the latest-row query: no row stored on or after today. */
function fakeDeps(start: number) {
  const clock = fixedClock(start);
  const clickhouse = { query: async () => ({ json: async () => [{ latest: '0', n: '0' }] }) };
  return { clock, deps: { clock, clickhouse } as unknown as Deps };
}
const versions = (): DataVersions & { move(): void } => {
  let v = 1;
  return { ...fakeDataVersions(() => `v${v}`), move: () => void v++ };
};

describe('answer cache (unit)', () => {
  it('keeps at most maxEntries answers, dropping the least recently used', async () => {
    const { clock, deps } = fakeDeps(Date.parse('2026-06-01T10:00:00.123Z'));
    const cache = new AnswerCache(versions(), { maxEntries: 2, maxBytes: 1 << 20 });
    let runs = 0;
    const ask = (name: string) => cache.answer(deps, { name, project, input: { period: '30d' } }, async () => ({ name, run: ++runs }));
    await ask('a');
    await ask('b');
    clock.advance(7);
    await ask('a'); // reused: a is now the most recent
    await ask('c'); // evicts b
    clock.advance(7);
    expect((await ask('a')).run).toBe(1);
    expect((await ask('b')).run).toBe(4);
    expect(cache.counts).toEqual({ computed: 4, reused: 2 });
  });

  it('keeps answers within maxBytes and never keeps one larger than a sixteenth of it', async () => {
    const { clock, deps } = fakeDeps(Date.parse('2026-06-01T10:00:00.123Z'));
    const cache = new AnswerCache(versions(), { maxEntries: 100, maxBytes: 1600 });
    const big = 'x'.repeat(200);
    let runs = 0;
    const ask = (name: string) => cache.answer(deps, { name, project, input: { period: '7d' } }, async () => ({ big: name === 'huge' ? big : '', run: ++runs }));
    await ask('huge');
    clock.advance(3);
    await ask('huge');
    expect(cache.counts.reused).toBe(0);
    await ask('small');
    clock.advance(3);
    await ask('small');
    expect(cache.counts.reused).toBe(1);
  });

  it('a moved version, a later 15-minute cell or an earlier clock computes again; otherwise `to` is restamped', async () => {
    const start = Date.parse('2026-06-01T10:00:00.123Z');
    const { clock, deps } = fakeDeps(start);
    const v = versions();
    const cache = new AnswerCache(v);
    const ask = (name = 'stats') => cache.answer(deps, { name, project, input: { period: '30d' } }, async () => ({ to: new Date(clock.now()).toISOString() }));
    await ask();
    v.move();
    await ask();
    clock.set(start + 15 * 60_000);
    await ask();
    expect(cache.counts).toEqual({ computed: 3, reused: 0 });
    clock.set(start + 20 * 60_000);
    await ask('other');
    clock.set(start + 20 * 60_000 - 5);
    expect(await ask('other')).toEqual({ to: new Date(clock.now()).toISOString() });
    expect(cache.counts).toEqual({ computed: 5, reused: 0 });
    clock.set(start + 20 * 60_000 + 9);
    expect(await ask('other')).toEqual({ to: new Date(clock.now()).toISOString() });
    expect(cache.counts.reused).toBe(1);
  });
});
