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
