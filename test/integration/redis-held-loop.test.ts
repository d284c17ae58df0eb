import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRespRedis, type RespRedis } from '../../src/adapters/redis-resp.js';
import { TEST_REDIS_URL } from '../helpers/harness.js';

/** Holds the event loop, as a long synchronous task or a starved host does. */
const holdLoop = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
};

let resp: RespRedis;
beforeAll(async () => {
  resp = await connectRespRedis({ url: TEST_REDIS_URL, commandTimeoutMs: 100 });
});
afterAll(async () => {
  await resp.close();
});

describe('a Redis command while the event loop is held past its timeout', () => {
  it('answers with the reply that came meanwhile instead of a timeout', async () => {
    const key = `held-loop:${process.pid}:${Date.now()}`;
    await resp.redis.set(key, 'kept', { ex: 60 });
    for (let i = 0; i < 5; i++) {
      const reading = resp.redis.get<string>(key);
      // The command goes out within microtasks and ticks, without a pass of the loop's I/O: its
      // reply, back from Redis within a millisecond, is read only after the hold.
      for (let tick = 0; tick < 20; tick++) await new Promise((resolve) => process.nextTick(resolve));
      holdLoop(300);
      await expect(reading).resolves.toBe('kept');
    }
  });
});
