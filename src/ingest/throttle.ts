import type { Redis } from '@upstash/redis';
import { isStoreReplyError, storeReplyText } from '../errors.js';
import { parseSession, SESSION_LUA, type Session, type SessionCall } from './enrich/session.js';
import { logError } from '../log.js';
import { withinTime } from '../adapters/event-loop.js';

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

// Checks that arrive in the same turn of the event loop go to Redis together: one script call
// for all of them. Per check: INCR both fixed windows (EXPIRE only on a window's first hit), and
// when the event passes both (the same comparison as `within`) and a session key is given, look
// the visitor's session up in the same call, so an accepted event costs a share of one round trip.
// ARGV: project TTL, IP TTL, project limit, IP limit, then per check a session flag ('1' followed
// by the three session args, or '0'). KEYS: per check the project and IP windows, then the
// session key when flagged. Answer: per check {project count, IP count, session id or false}.
const SCRIPT = `${SESSION_LUA}
local out = {}
local k, a = 1, 5
local pLimit, iLimit = tonumber(ARGV[3]), tonumber(ARGV[4])
while a <= #ARGV do
  local p = redis.call('INCR', KEYS[k])
  if p == 1 then redis.call('EXPIRE', KEYS[k], ARGV[1]) end
  local i = redis.call('INCR', KEYS[k + 1])
  if i == 1 then redis.call('EXPIRE', KEYS[k + 1], ARGV[2]) end
  local sid = false
  if ARGV[a] == '1' then
    if p <= pLimit and i <= iLimit then sid = session(KEYS[k + 2], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3]) end
    k, a = k + 3, a + 4
  else
    k, a = k + 2, a + 1
  end
  out[#out + 1] = p
  out[#out + 1] = i
  out[#out + 1] = sid
end
return out`;

/** Most checks sent in one script call; more in one turn of the event loop start another call. */
const MAX_BATCH = 256;

interface PendingCheck {
  projectId: string;
  ip: string;
  session?: SessionCall;
  sec: number;
  min: number;
  resolve(verdict: ThrottleVerdict): void;
}

/** What the throttle decided, and the session when Redis looked it up in the same call. */
export interface ThrottleVerdict {
  allowed: boolean;
  /** Present only when allowed, a session was asked for, and Redis answered in time. */
  session?: Session;
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
 * Per-project and per-IP ingest throttles: fixed windows in Redis (INCR + EXPIRE in a script; the
 * checks of one event-loop turn share one call, so a busy process sends one call per turn rather
 * than one per event). It fails open: when Redis errors or is slower than `redisTimeoutMs`, the
 * same limits are applied per process, and Redis is skipped for `cooldownMs` before it is tried
 * again.
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
   * describes in the same Redis call. Without a `session` in the answer (Redis slow or down,
   * or the local fallback decided) the caller looks the session up itself.
   */
  check(projectId: string, ip: string, session?: SessionCall): Promise<ThrottleVerdict> {
    const now = this.now();
    const sec = Math.floor(now / 1000);
    const min = Math.floor(now / 60_000);
    if (now < this.redisDownUntil) return Promise.resolve(this.decideLocally(projectId, ip, sec, min));
    return new Promise((resolve) => {
      this.pending.push({ projectId, ip, session, sec, min, resolve });
      if (this.pending.length === 1) setImmediate(this.sendPending);
      else if (this.pending.length >= MAX_BATCH) this.sendPending();
    });
  }

  private pending: PendingCheck[] = [];

  /** Sends the checks gathered so far as one script call, and answers each. */
  private readonly sendPending = (): void => {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const keys: string[] = [];
    const args = ['2', '61', String(this.limits.projectPerSec), String(this.limits.ipPerMin)];
    for (const c of batch) {
      keys.push(`ingest:rl:p:${c.projectId}:${c.sec}`, `ingest:rl:ip:${c.ip}:${c.min}`);
      if (c.session) {
        keys.push(c.session.key);
        args.push('1', ...c.session.args);
      } else args.push('0');
    }
    void this.fromRedis(keys, args).then((answer) => {
      if (answer === 'refused') {
        // Redis answered, with an error: not an outage, so no cooldown; this batch is decided here.
        for (const c of batch) c.resolve(this.decideLocally(c.projectId, c.ip, c.sec, c.min));
        return;
      }
      if (answer === 'down' || answer.length !== batch.length * 3) {
        this.redisDownUntil = this.now() + this.cooldownMs;
        for (const c of batch) c.resolve(this.decideLocally(c.projectId, c.ip, c.sec, c.min));
        return;
      }
      batch.forEach((c, n) => {
        const allowed = this.within(Number(answer[n * 3]), Number(answer[n * 3 + 1]));
        const session = answer[n * 3 + 2];
        // A false is Redis nil.
        c.resolve(allowed && c.session && (typeof session === 'string' || typeof session === 'number') ? { allowed, session: parseSession(session, Number(c.session.args[2])) } : { allowed });
      });
    });
  };

  private decideLocally(projectId: string, ip: string, sec: number, min: number): ThrottleVerdict {
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

  private lastRefusalLog = -Infinity;

  /**
   * The script's answer; 'down' when Redis failed or was slower than the timeout (an outage),
   * 'refused' when it answered with an error (WRONGTYPE, OOM…: logged, at most every 10 s).
   */
  private async fromRedis(keys: string[], args: string[]): Promise<unknown[] | 'down' | 'refused'> {
    const answer = this.runScript(keys, args).then(
      (reply) => (Array.isArray(reply) ? reply : ('down' as const)),
      (err: unknown) => {
        if (!isStoreReplyError(err)) return 'down' as const;
        if (this.now() - this.lastRefusalLog >= 10_000) {
          this.lastRefusalLog = this.now();
          logError(`[sightline] ingest throttle: Redis refused the script: ${storeReplyText(err)}`);
        }
        return 'refused' as const;
      },
    );
    return withinTime<unknown[] | 'down' | 'refused'>(answer, this.timeoutMs, () => 'down');
  }
}
