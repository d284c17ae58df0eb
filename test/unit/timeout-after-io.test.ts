import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timeoutAfterIo, withinTime } from '../../src/adapters/event-loop.js';

/** Holds the event loop, as a long synchronous task or a starved host does. */
const holdLoop = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // held
  }
};

let server: Server;
let client: Socket;
let peer: Socket;
beforeAll(async () => {
  const accepted = new Promise<Socket>((resolve) => {
    server = createServer(resolve);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  client = connect(port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  peer = await accepted;
});
afterAll(async () => {
  client.destroy();
  peer.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** The next bytes `client` reads, or 'timed out' when the timeout (timeoutAfterIo, through withinTime) comes first. */
const answerOrTimeout = (ms: number) =>
  withinTime(new Promise<string>((resolve) => client.once('data', (bytes) => resolve(String(bytes)))), ms, () => 'timed out');

describe('timeoutAfterIo, through withinTime', () => {
  it('lets an answer that arrived while the loop was held past the timeout win', async () => {
    for (let i = 0; i < 5; i++) {
      const waiting = answerOrTimeout(20);
      // Written to the kernel at once (the socket is idle); read by the loop only after the hold.
      peer.write(`answer ${i}`);
      holdLoop(150);
      expect(await waiting).toBe(`answer ${i}`);
    }
  });

  it('times out when no answer comes', async () => {
    const started = performance.now();
    expect(await answerOrTimeout(30)).toBe('timed out');
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);
    // The answer that was waited for is consumed by this listener, not a later test's.
    peer.write('late');
    await new Promise((resolve) => client.once('data', resolve));
  });

  it('does nothing once cancelled', async () => {
    let fired = false;
    const cancel = timeoutAfterIo(10, () => (fired = true));
    cancel();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(fired).toBe(false);
  });
});

describe('withinTime', () => {
  it("answers the work's outcome when it comes first", async () => {
    expect(await withinTime(Promise.resolve('work'), 1_000, () => 'late')).toBe('work');
    await expect(withinTime(Promise.reject(new Error('failed')), 1_000, () => 'late')).rejects.toThrow('failed');
  });

  it("answers the timeout's value, or rejects with what it throws, when the work is slower", async () => {
    const never = new Promise<string>(() => {});
    expect(await withinTime(never, 20, () => 'timed out')).toBe('timed out');
    await expect(
      withinTime(never, 20, () => {
        throw new Error('too slow');
      }),
    ).rejects.toThrow('too slow');
  });
});

