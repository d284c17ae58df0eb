import { describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '../../src/adapters/clickhouse.js';
import { coalescedReads, inBackground } from '../../src/adapters/coalesced-reads.js';

type Read = Parameters<ClickHouseClient['query']>[0];

/** A client whose statements end when the test says: each one sent is kept with its release. */
function heldClient() {
  const sent: { query: string; release(): void }[] = [];
  const client = {
    query(params: Read) {
      return new Promise((resolve) => {
        sent.push({ query: params.query, release: () => resolve({ json: async () => [{ read: 0, rows: [] }] }) });
      });
    },
  } as unknown as ClickHouseClient;
  return { sent, client };
}

const read = (n: number): Read => ({ query: `SELECT {n:UInt8} AS n${n}`, query_params: { n }, format: 'JSONEachRow' });
const turn = () => new Promise((resolve) => setImmediate(resolve));
/** The reads (their `n`) a statement answers, in branch order: a read alone is its own statement. */
const readsIn = (query: string): number[] => Array.from(query.matchAll(/ AS n(\d+)/g), ([, n]) => Number(n));

describe('coalescedReads with two statements at once', () => {
  it("sends users' reads that arrive while one statement runs at once as a second, and later ones after either ends", async () => {
    const { sent, client } = heldClient();
    const reads = coalescedReads(client, { statementsAtOnce: 2 });
    void reads.query(read(1));
    await turn();
    void reads.query(read(2));
    void reads.query(read(3));
    await turn();
    expect(sent.map((s) => s.query.match(/ AS read, /g)?.length ?? 1)).toEqual([1, 2]);
    void reads.query(read(4));
    await turn();
    expect(sent).toHaveLength(2);
    sent[0]!.release();
    await turn();
    expect(sent).toHaveLength(3);
    expect(sent[2]!.query).toBe(read(4).query);
  });

  it('never gives the second place to a background read', async () => {
    const { sent, client } = heldClient();
    const reads = coalescedReads(client, { statementsAtOnce: 2 });
    const background = inBackground(reads);
    void reads.query(read(1));
    await turn();
    void background.query(read(2));
    await turn();
    expect(sent).toHaveLength(1);
    sent[0]!.release();
    await turn();
    expect(sent).toHaveLength(2);
    expect(sent[1]!.query).toBe(read(2).query);
  });

  it('with an even share, sends at most half of the distinct reads waiting in a statement, identical reads kept together', async () => {
    const { sent, client } = heldClient();
    const reads = coalescedReads(client, { statementsAtOnce: 2, evenShare: 2 });
    // Six distinct reads and a copy of the first, in one turn: half of the six go with the copy,
    // then half of the three left beside them, and the last when a place frees.
    for (const n of [1, 2, 3, 4, 5, 6, 1]) void reads.query(read(n));
    await turn();
    expect(sent.map((s) => readsIn(s.query))).toEqual([[1, 2, 3], [4, 5]]);
    sent[1]!.release();
    await turn();
    expect(sent.map((s) => readsIn(s.query))).toEqual([[1, 2, 3], [4, 5], [6]]);
  });

  it('with an even share, leaves the rest of the reads waiting for the next place', async () => {
    const { sent, client } = heldClient();
    const reads = coalescedReads(client, { statementsAtOnce: 2, evenShare: 2 });
    void reads.query(read(1));
    await turn();
    // One place left and seven distinct reads: four go now (half, rounded up), the others later.
    for (const n of [2, 3, 4, 5, 6, 7, 8]) void reads.query(read(n));
    await turn();
    expect(sent.map((s) => readsIn(s.query))).toEqual([[1], [2, 3, 4, 5]]);
    sent[0]!.release();
    await turn();
    expect(sent.map((s) => readsIn(s.query))).toEqual([[1], [2, 3, 4, 5], [6, 7]]);
  });

  it('with an even share, takes at least its least', async () => {
    const { sent, client } = heldClient();
    const reads = coalescedReads(client, { statementsAtOnce: 2, evenShare: 4 });
    for (const n of [1, 2, 3, 4, 5, 6]) void reads.query(read(n));
    await turn();
    expect(sent.map((s) => readsIn(s.query))).toEqual([[1, 2, 3, 4], [5, 6]]);
  });

  it('with an even share, still sends the background reads waiting in one statement (they never take the second place)', async () => {
    const { sent, client } = heldClient();
    const background = inBackground(coalescedReads(client, { statementsAtOnce: 2, evenShare: 2 }));
    for (const n of [1, 2, 3, 4, 5, 6]) void background.query(read(n));
    await turn();
    expect(sent.map((s) => readsIn(s.query))).toEqual([[1, 2, 3, 4, 5, 6]]);
  });

  it('sends one statement at a time by default', async () => {
    const { sent, client } = heldClient();
    const reads = coalescedReads(client);
    void reads.query(read(1));
    await turn();
    void reads.query(read(2));
    await turn();
    expect(sent).toHaveLength(1);
    sent[0]!.release();
    await turn();
    expect(sent).toHaveLength(2);
  });
});
