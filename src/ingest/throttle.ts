import type { Redis } from '@upstash/redis';
import { SESSION_LUA, type SessionCall } from './enrich/session.js';

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

// One round trip for both fixed windows; EXPIRE only on a window's first hit. When the event
// passes both (the same comparison as `within`) and a session key is given, the visitor's
// session is looked up in the same call, so an accepted event costs one round trip, not two.
// KEYS: project window, IP window, [session]; ARGV: TTLs (2), limits (2), [session args (3)].
const SCRIPT = `${SESSION_LUA}
local p = redis.call('INCR', KEYS[1])
if p == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
local i = redis.call('INCR', KEYS[2])
if i == 1 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
if KEYS[3] and p <= tonumber(ARGV[3]) and i <= tonumber(ARGV[4]) then
  return {p, i, session(KEYS[3], ARGV[5], ARGV[6], ARGV[7])}
end
return {p, i}`;

/** What the throttle decided, and the session id when Redis looked it up in the same call. */
export interface ThrottleVerdict {
  allowed: boolean;
  /** Present only when allowed, a session was asked for, and Redis answered in time. */
  sessionId?: string;
}

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
    return (await this.check(projectId, ip)).allowed;
  }

  /**
   * Like `allow`, and when the event passes, also continues or starts the session `session`
   * describes in the same Redis call. Without a `sessionId` in the answer (Redis slow or down,
   * or the local fallback decided) the caller looks the session up itself.
   */
  async check(projectId: string, ip: string, session?: SessionCall): Promise<ThrottleVerdict> {
    const now = this.now();
    const sec = Math.floor(now / 1000);
    const min = Math.floor(now / 60_000);
    if (now >= this.redisDownUntil) {
      const keys = [`ingest:rl:p:${projectId}:${sec}`, `ingest:rl:ip:${ip}:${min}`];
      const args = ['2', '61', String(this.limits.projectPerSec), String(this.limits.ipPerMin)];
      if (session) {
        keys.push(session.key);
        args.push(...session.args);
      }
      const answer = await this.fromRedis(keys, args);
      if (answer) {
        const allowed = this.within(answer[0], answer[1]);
        // Upstash turns digit strings that fit a double back into numbers.
        return allowed && answer[2] !== undefined ? { allowed, sessionId: String(answer[2]) } : { allowed };
      }
      this.redisDownUntil = now + this.cooldownMs;
    }
    return { allowed: this.within(this.perSecond.hit(projectId, sec), this.perMinute.hit(ip, min)) };
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
  private async runScript(keys: string[], args: string[]): Promise<unknown> {
    this.sha ??= await this.redis.scriptLoad(SCRIPT);
    try {
      return await this.redis.evalsha<string[], unknown[]>(this.sha, keys, args);
    } catch (err) {
      if (!/NOSCRIPT/.test((err as Error).message)) throw err;
      this.sha = null;
      return this.redis.eval<string[], unknown[]>(SCRIPT, keys, args);
    }
  }

  private async fromRedis(keys: string[], args: string[]): Promise<[number, number, unknown?] | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.timeoutMs);
    });
    try {
      const answer = this.runScript(keys, args).catch(() => null);
      const reply = await Promise.race([answer, timeout]);
      return Array.isArray(reply) ? [Number(reply[0]), Number(reply[1]), reply[2]] : null;
    } finally {
      clearTimeout(timer);
    }
  }
}
