import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { POSTED_READS } from '../../src/app.js';
import { countReads, createReadsInFlight } from '../../src/http/reads-in-flight.js';

/** Whether `promise` has settled after pending callbacks and `ms` more have run. */
const settledWithin = async (promise: Promise<unknown>, ms = 0) => {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((r) => setTimeout(r, ms));
  return done;
};

describe('reads in flight', () => {
  it('lets bulk work go on at once when nothing is being read', async () => {
    const reads = createReadsInFlight();
    expect(await settledWithin(reads.settled(10_000))).toBe(true);
  });

  it('holds it until the last of the reads is answered', async () => {
    const reads = createReadsInFlight();
    const endFirst = reads.begin();
    const endSecond = reads.begin();
    const waiting = reads.settled(10_000);
    endFirst();
    // Ending the same read twice must not count for the other one.
    endFirst();
    expect(reads.count).toBe(1);
    expect(await settledWithin(waiting, 20)).toBe(false);
    endSecond();
    expect(await settledWithin(waiting)).toBe(true);
    expect(reads.count).toBe(0);
  });

  it('holds it no longer than the bound while reads go on', async () => {
    const reads = createReadsInFlight();
    reads.begin();
    const started = performance.now();
    await reads.settled(50);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(reads.count).toBe(1);
  });
});

describe('countReads', () => {
  /** An app whose routes report how many reads were in flight while they ran. */
  const appCounting = () => {
    const reads = createReadsInFlight();
    const app = new Hono();
    app.use('*', countReads(reads, POSTED_READS));
    const seen = (c: { json: (o: unknown) => Response }) => c.json({ reads: reads.count });
    app.get('/api/v1/projects/:domain/pages', seen);
    app.post('/api/v1/projects/:domain/query', seen);
    app.post('/mcp', seen);
    app.post('/api/v1/projects/:domain/import', seen);
    app.post('/api/event', seen);
    app.get('/fails', () => {
      throw new Error('boom');
    });
    return { app, reads };
  };
  const readsSeen = async (app: Hono, method: string, path: string) => ((await (await app.request(path, { method })).json()) as { reads: number }).reads;

  it('counts reports, the query API and MCP while they are answered', async () => {
    const { app, reads } = appCounting();
    expect(await readsSeen(app, 'GET', '/api/v1/projects/a.example/pages')).toBe(1);
    expect(await readsSeen(app, 'POST', '/api/v1/projects/a.example/query')).toBe(1);
    expect(await readsSeen(app, 'POST', '/mcp')).toBe(1);
    expect(reads.count).toBe(0);
  });

  it('does not count writes, so an import never waits on another import or on live events', async () => {
    const { app } = appCounting();
    expect(await readsSeen(app, 'POST', '/api/v1/projects/a.example/import')).toBe(0);
    expect(await readsSeen(app, 'POST', '/api/event')).toBe(0);
  });

  it('stops counting a read that failed', async () => {
    const { app, reads } = appCounting();
    expect((await app.request('/fails')).status).toBe(500);
    expect(reads.count).toBe(0);
  });
});
