import type { Redis } from '@upstash/redis';

export interface ThrottleLimits {
  /** Events a project may send per second (all its visitors together). */
  projectPerSec: number;
  /** Events one client IP may send per minute. */
  ipPerMin: number;
}

export interface ThrottleOptions {
  /** A Redis answer slower than this counts as an outage: the in-process limiter decides. */
  redisTimeoutMs?: number;
  /** After an outage, Redis is left alone this long so every request does not wait the timeout. */
  cooldownMs?: number;
  now?: () => number;
}

// One round trip for both fixed windows; EXPIRE only on a window's first hit.
const SCRIPT = `
local p = redis.call('INCR', KEYS[1])
if p == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local i = redis.call('INCR', KEYS[2])
if i == 1 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
return {p, i}`;

/** Fixed-window counters in this process: the fallback when Redis cannot answer in time. */
class LocalWindows {
  private counts = new Map<string, number>();
  private window = -1;

  /** Counts a hit on `key` in the window `windowId`; windows of one length share a map. */
  hit(key: string, windowId: number): number {
    if (windowId !== this.window) {
      this.counts.clear();
      this.window = windowId;
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n;
  }
}

/**
 * Per-project and per-IP ingest throttles: fixed windows in Redis (INCR + EXPIRE in one script,
 * one round trip). It fails open: when Redis errors or is slower than `redisTimeoutMs`, the same
 * limits are applied per process, and Redis is skipped for `cooldownMs` before it is tried again.
 */
export class IngestThrottle {
  private readonly perSecond = new LocalWindows();
  private readonly perMinute = new LocalWindows();
  private redisDownUntil = 0;
  private readonly timeoutMs: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly limits: ThrottleLimits,
    opts: ThrottleOptions = {},
  ) {
    this.timeoutMs = opts.redisTimeoutMs ?? 50;
    this.cooldownMs = opts.cooldownMs ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  /** True when the event may pass; false when either window is over its limit. */
  async allow(projectId: string, ip: string): Promise<boolean> {
    const now = this.now();
    const sec = Math.floor(now / 1000);
    const min = Math.floor(now / 60_000);
    const keys = [`ingest:rl:p:${projectId}:${sec}`, `ingest:rl:ip:${ip}:${min}`];
    if (now >= this.redisDownUntil) {
      const counts = await this.fromRedis(keys);
      if (counts) return this.within(counts[0], counts[1]);
      this.redisDownUntil = now + this.cooldownMs;
    }
    return this.within(this.perSecond.hit(projectId, sec), this.perMinute.hit(ip, min));
  }

  /** Whether the last Redis answer was missing (for tests and logs). */
  get degraded(): boolean {
    return this.now() < this.redisDownUntil;
  }

  private within(projectCount: number, ipCount: number): boolean {
    return projectCount <= this.limits.projectPerSec && ipCount <= this.limits.ipPerMin;
  }

  private sha: string | null = null;

  /** EVALSHA keeps the script text off the wire on every event; loaded once, reloaded after a flush. */
  private async runScript(keys: string[]): Promise<unknown> {
    this.sha ??= await this.redis.scriptLoad(SCRIPT);
    try {
      return await this.redis.evalsha<string[], [number, number]>(this.sha, keys, ['2', '61']);
    } catch (err) {
      if (!/NOSCRIPT/.test((err as Error).message)) throw err;
      this.sha = null;
      return this.redis.eval<string[], [number, number]>(SCRIPT, keys, ['2', '61']);
    }
  }

  private async fromRedis(keys: string[]): Promise<[number, number] | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.timeoutMs);
    });
    try {
      const answer = this.runScript(keys).catch(() => null);
      const counts = await Promise.race([answer, timeout]);
      return Array.isArray(counts) ? [Number(counts[0]), Number(counts[1])] : null;
    } finally {
      clearTimeout(timer);
    }
  }
}
