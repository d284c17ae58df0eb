import type { Redis } from '@upstash/redis';

/** One method call on the Redis client: its name and arguments. */
export interface RedisCall {
  method: string;
  args: unknown[];
}

/**
 * The same Redis client, recording every command method called on it (and on the pipelines and
 * transactions it makes) before passing it on. Every store and the rate limiter reach Redis
 * through these methods, so a request whose calls were not recorded did not touch Redis.
 */
export function spyRedis(redis: Redis): { redis: Redis; calls: RedisCall[] } {
  const calls: RedisCall[] = [];
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver);
        if (typeof value !== 'function' || typeof prop !== 'string') return value;
        return (...args: unknown[]) => {
          if (prop !== 'exec') calls.push({ method: prop, args });
          const result = (value as (...a: unknown[]) => unknown).apply(obj, args);
          // pipeline() / multi() and their chained commands hand back a pipeline: record its commands too.
          const chained = result === obj || prop === 'pipeline' || prop === 'multi';
          return chained && result && typeof result === 'object' ? wrap(result) : result;
        };
      },
    });
  return { redis: wrap(redis), calls };
}

/** The Redis keys named by a recorded call (the first argument of key commands, `keys` of scripts). */
export function keysOf(call: RedisCall): string[] {
  const [first, second] = call.args;
  if (call.method === 'eval' || call.method === 'evalsha' || call.method === 'evalRo' || call.method === 'evalshaRo') {
    return Array.isArray(second) ? second.map(String) : [];
  }
  if (call.method === 'mget' || call.method === 'del' || call.method === 'exists') return call.args.flat().map(String);
  return typeof first === 'string' ? [first] : [];
}
