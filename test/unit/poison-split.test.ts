import { describe, expect, it } from 'vitest';
import { insertIsolatingRefused, partToken, type IsolationPlan } from '../../src/ingest/poison.js';

// The split logic alone, over an in-memory "table" that refuses some rows with the error shape
// the embedded engine throws (see test/integration/insert-errors.test.ts); the batcher and the
// queue consumer run it against the real engine in test/faults/clickhouse-refusing.test.ts.
const dataError = (row: number | undefined) =>
  Object.assign(new Error(`Code: 41. DB::Exception: Cannot read DateTime${row === undefined ? '' : ` (at row ${row})`}`), { clickhouseCode: 41, code: 'CHDB_INSERT' });

/** `namesRow`: errors say which row they refuse, as the engine's parse errors do; a view's error does not. */
function table(bad: Set<number>, namesRow = true) {
  const stored = new Map<string, number[]>();
  const inserts: string[] = [];
  const plan = (rows: number, token: string, extra: Partial<IsolationPlan> = {}): IsolationPlan => ({
    rows,
    tokenFor: (from, to, skip) => partToken(token, rows, from, to, skip),
    async insert(from, to, skip, tok) {
      inserts.push(tok);
      const sent = Array.from({ length: to - from }, (_, i) => from + i).filter((i) => !skip.includes(i));
      const first = sent.findIndex((i) => bad.has(i));
      if (first >= 0) throw dataError(namesRow ? first + 1 : undefined);
      // Dedup by token, as ClickHouse does.
      if (!stored.has(tok)) stored.set(tok, sent);
    },
    onFailure: async () => {
      throw new Error('unexpected');
    },
    ...extra,
  });
  const rows = () => [...stored.values()].flat().sort((a, b) => a - b);
  return { plan, rows, inserts, stored };
}

describe('insertIsolatingRefused', () => {
  for (const namesRow of [true, false]) {
    it(`stores everything but the refused rows, each once, and names those with their error (errors ${namesRow ? 'name' : 'do not name'} the row)`, async () => {
      const bad = new Set([3, 4, 57, 99]);
      const t = table(bad, namesRow);
      const { refused, placed, inserts } = await insertIsolatingRefused(t.plan(100, 'tok'));
      expect(refused.map((r) => r.index)).toEqual([3, 4, 57, 99]);
      expect(refused[0].error).toMatch(/Cannot read DateTime/);
      expect(placed).toBe(100);
      expect(t.rows()).toEqual(Array.from({ length: 100 }, (_, i) => i).filter((i) => !bad.has(i)));
      expect(inserts).toBe(t.inserts.length);
      // Named rows are set apart: k refused attempts at the rest, k single rows, one part stored.
      // Else about 2·k·log2(n/k) inserts.
      expect(t.inserts.length).toBeLessThanOrEqual(namesRow ? 9 : 50);
      if (namesRow) expect(t.stored.size).toBe(1);
    });

    it(`splits the same way every time, so a replay reuses the tokens of the parts already stored (errors ${namesRow ? 'name' : 'do not name'} the row)`, async () => {
      const bad = new Set([10, 11, 700]);
      const first = table(bad, namesRow);
      await insertIsolatingRefused(first.plan(1000, 'batch-1'));
      const again = table(bad, namesRow);
      await insertIsolatingRefused(again.plan(1000, 'batch-1'));
      expect(again.inserts).toEqual(first.inserts);
      expect(first.inserts[0]).toBe('batch-1');
      expect(first.inserts[1]).toBe(namesRow ? 'batch-1:10-11' : 'batch-1:0-500');
      if (namesRow) expect(first.inserts.at(-1)).toMatch(/^batch-1:0-1000~3\.[0-9a-f]+$/);
    });
  }

  it('handles refused rows at the edges and side by side, and an engine that names the wrong row', async () => {
    const bad = new Set([0, 1, 2, 50, 98, 99]);
    const t = table(bad);
    const { refused } = await insertIsolatingRefused(t.plan(100, 'edges'));
    expect(refused.map((r) => r.index)).toEqual([...bad]);
    expect(t.rows()).toEqual(Array.from({ length: 100 }, (_, i) => i).filter((i) => !bad.has(i)));

    // Names the row after the bad one (when there is one): that good row is stored alone, once.
    const off = table(bad);
    const wrong = off.plan(100, 'off', {
      async insert(from, to, skip, tok) {
        try {
          await off.plan(100, 'off').insert(from, to, skip, tok);
        } catch (err) {
          const named = Number(/at row (\d+)/.exec((err as Error).message)![1]);
          throw to - from - skip.length > named ? dataError(named + 1) : err;
        }
      },
    });
    const result = await insertIsolatingRefused(wrong);
    expect(result.refused.map((r) => r.index)).toEqual([...bad]);
    expect(off.rows()).toEqual(Array.from({ length: 100 }, (_, i) => i).filter((i) => !bad.has(i)));
    expect(result.placed).toBe(100);
  });

  it('a batch without refused rows is one insert under its own token', async () => {
    const t = table(new Set());
    const progress = await insertIsolatingRefused(t.plan(50, 'whole'));
    expect(t.inserts).toEqual(['whole']);
    expect(progress).toEqual({ placed: 50, refused: [], inserts: 1 });
  });

  it('retries other errors as told, and stops with the progress so far when told to', async () => {
    let failures = 0;
    const t = table(new Set([1]), false);
    const flaky = t.plan(8, 'flaky', {
      async insert(from, to, skip, tok) {
        // Rows 4-7 meet a connection error twice, then one that stops the batch.
        if (from >= 4 && failures++ < 3) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
        return t.plan(8, 'flaky').insert(from, to, skip, tok);
      },
      async onFailure(_err, kind, attempt) {
        expect(kind).toBe('transient');
        if (attempt < 3) return 'retry';
        throw new Error('stop');
      },
    });
    const progress = { placed: 0, refused: [], inserts: 0 };
    await expect(insertIsolatingRefused(flaky, progress)).rejects.toThrow('stop');
    expect(progress.placed).toBe(4);
    expect(progress.refused).toEqual([{ index: 1, error: expect.stringMatching(/DateTime/) }]);
    expect(t.rows()).toEqual([0, 2, 3]);
  });

  it('treats an error as data when onFailure says split', async () => {
    const t = table(new Set());
    const odd = t.plan(4, 'odd', {
      async insert(from, to) {
        if (from <= 2 && to > 2) throw new Error('Code: 60. DB::Exception: something odd');
      },
      onFailure: async (_err, kind) => (kind === 'unknown' ? 'split' : 'retry'),
    });
    const { refused } = await insertIsolatingRefused(odd);
    expect(refused.map((r) => r.index)).toEqual([2]);
  });
});
